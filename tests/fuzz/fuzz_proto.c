/*
 * fuzz_proto.c - libFuzzer harness for the control protocol decoder: the
 * bytes a client sends, framed and parsed as the daemon does (every
 * message up to each NUL, with the size limit), each call checked.
 *
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -D_GNU_SOURCE -Icommon \
 *       tests/fuzz/fuzz_proto.c common/proto.c -ljansson \
 *       -o fuzz_proto && ./fuzz_proto tests/fuzz/corpus/proto
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *buf = (const char *)data;
	char	 err[256];
	size_t	 off = 0;

	while (off < size) {
		json_t	*msg;
		struct proto_call call;
		long	 n;

		n = proto_parse(buf + off, size - off, 4096, &msg, err, sizeof(err));
		if (n <= 0)
			break;
		if ((size_t)n > size - off)
			abort();	/* consumed more than given */
		if (proto_check_call(msg, &call, err, sizeof(err)) == 0) {
			json_t	*reply = proto_reply(json_pack("{s:s}", "method", call.method),
			    call.more);
			size_t	 len;
			char	*s = proto_serialize(reply, &len);

			if (s == NULL || s[len - 1] != '\0' || strlen(s) != len - 1)
				abort();	/* a reply must be exactly one frame */
			free(s);
			json_decref(reply);
		}
		json_decref(msg);
		off += (size_t)n;
	}
	return 0;
}
