/*
 * fuzz_config.c - libFuzzer harness for the configuration parser.  The input
 * is a configuration file (written to a memfd, loaded by its /proc path over
 * the defaults).  Whatever loads must validate and must survive
 * config_dump -> config_load unchanged; short inputs are also tried as a
 * size and a duration, whose formatted form must parse back to the value.
 *
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -D_GNU_SOURCE \
 *       -Icommon tests/fuzz/fuzz_config.c common/config.c -linih \
 *       -o fuzz_config && ./fuzz_config tests/fuzz/corpus/config
 */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sys/mman.h>

#include "config.h"

static int
fuzz_write_memfd(const uint8_t *data, size_t size, char *path, size_t len)
{
	int	 fd;

	if ((fd = memfd_create("fuzz_config", MFD_CLOEXEC)) == -1)
		abort();
	if (size > 0 && write(fd, data, size) != (ssize_t)size)
		abort();
	snprintf(path, len, "/proc/self/fd/%d", fd);
	return fd;
}

static void
fuzz_round_trip(const struct config *conf)
{
	struct config	 back;
	char		 path[64], err[512], *buf = NULL;
	size_t		 len = 0;
	FILE		*fp;
	int		 fd;

	if ((fp = open_memstream(&buf, &len)) == NULL)
		abort();
	config_dump(conf, fp);
	fclose(fp);
	fd = fuzz_write_memfd((uint8_t *)buf, len, path, sizeof(path));
	config_defaults(&back);
	if (config_load(&back, path, err, sizeof(err)) == -1) {
		fprintf(stderr, "dump does not load: %s\n%s", err, buf);
		abort();
	}
	if (memcmp(&back, conf, sizeof(back)) != 0) {
		fprintf(stderr, "dump loads differently:\n%s", buf);
		abort();
	}
	close(fd);
	free(buf);
}

static void
fuzz_numbers(const uint8_t *data, size_t size)
{
	char		 s[64], out[32];
	uint64_t	 v, back;

	if (size >= sizeof(s))
		return;
	memcpy(s, data, size);
	s[size] = '\0';
	if (config_parse_size(s, &v) == 0) {
		config_format_size(v, out, sizeof(out));
		if (config_parse_size(out, &back) == -1 || back != v)
			abort();
	}
	if (config_parse_duration(s, &v) == 0) {
		config_format_duration(v, out, sizeof(out));
		if (config_parse_duration(out, &back) == -1 || back != v)
			abort();
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct config	 conf;
	char		 path[64], err[512];
	int		 fd;

	fuzz_numbers(data, size);

	fd = fuzz_write_memfd(data, size, path, sizeof(path));
	config_defaults(&conf);
	err[0] = '\0';
	if (config_load(&conf, path, err, sizeof(err)) == 0) {
		if (config_validate(&conf, err, sizeof(err)) == -1) {
			fprintf(stderr, "loaded but invalid: %s\n", err);
			abort();
		}
		fuzz_round_trip(&conf);
	} else if (strncmp(err, path, strlen(path)) != 0 ||
	    strchr(err, '\n') != NULL) {
		fprintf(stderr, "bad message: %s\n", err);
		abort();
	}
	close(fd);
	return 0;
}
