/*
 * fuzz_buildid.c - libFuzzer harness for the build-id reader: each input is
 * read as an ELF file (through a memfd, as buildid_read_fd sees a binary),
 * again as the start of a sparse file of 1 GiB (a file that lies about its
 * size: its headers may then claim what they like inside it, and the
 * reader must still not size anything from them; libFuzzer's RSS limit
 * catches an expansion), and once as a raw note blob.  Seeds:
 * tests/fuzz/corpus/buildid/ (lying-* are such headers).
 *
 *	clang -g -O1 -fsanitize=fuzzer,address,undefined -D_GNU_SOURCE \
 *	    -Icommon -o fuzz_buildid tests/fuzz/fuzz_buildid.c \
 *	    common/buildid.c
 *	./fuzz_buildid -max_total_time=60 tests/fuzz/corpus/buildid
 */
#include <sys/mman.h>

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buildid.h"

#define FUZZ_SPARSE_SIZE	(1LL << 30)

static int	fuzz_fd = -1;

static void
fuzz_check_result(int r)
{
	if (r > BUILD_ID_MAX || r == 0)
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t		 id[BUILD_ID_MAX];
	char		 hex[BUILD_ID_HEX_MAX];
	size_t		 done = 0;
	ssize_t		 n;
	int		 r;

	if (fuzz_fd == -1 &&
	    (fuzz_fd = memfd_create("fuzz_buildid", MFD_CLOEXEC)) == -1)
		abort();
	if (ftruncate(fuzz_fd, 0) == -1)
		abort();
	while (done < size) {
		if ((n = pwrite(fuzz_fd, data + done, size - done, done)) <= 0)
			abort();
		done += n;
	}

	r = buildid_read_fd(fuzz_fd, id);
	fuzz_check_result(r);
	if (r > 0)
		buildid_to_hex(id, r, hex);

	if (ftruncate(fuzz_fd, FUZZ_SPARSE_SIZE) == -1)
		abort();
	r = buildid_read_fd(fuzz_fd, id);
	fuzz_check_result(r);

	r = buildid_parse_notes(data, size, id);
	fuzz_check_result(r);
	if (r > 0) {
		buildid_to_hex(id, r, hex);
		if (buildid_from_hex(hex, id) != r)
			abort();
	}
	return 0;
}
