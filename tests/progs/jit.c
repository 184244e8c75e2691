/*
 * jit.c - a process with JIT code, the way Node or a JVM agent has it: it
 * copies a loop into anonymous executable memory, names it in
 * /tmp/perf-PID.map (perf's convention: "START SIZE NAME", hex) and runs it.
 * x86-64 only.  The map is left behind, as runtimes leave it.
 * Usage: jit SECONDS [symlink | chown | garbage]
 *	symlink	/tmp/perf-PID.map is a symlink to the real map (refused)
 *	chown	the map belongs to another user (refused)
 *	garbage	the map has no valid line, and 16 more pages are made
 *		executable one by one (16 more executable anonymous mappings)
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

/* mov %rdi,%rax; 1: dec %rax; jnz 1b; ret */
static const unsigned char code[] = { 0x48, 0x89, 0xf8, 0x48, 0xff, 0xc8, 0x75, 0xfb, 0xc3 };

int
main(int argc, char **argv)
{
	double	 secs = argc > 1 ? atof(argv[1]) : 2;
	const char *mode = argc > 2 ? argv[2] : "";
	struct timespec a, b;
	char	 path[64], real[96];
	unsigned char *p;
	FILE	*f;
	long	(*fn)(long);

	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return 1;
	memcpy(p + 64, code, sizeof(code));
	if (mprotect(p, 4096, PROT_READ | PROT_EXEC) == -1)
		return 1;
	fn = (long (*)(long))(void *)(p + 64);
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	snprintf(real, sizeof(real), "/tmp/pm-jit-real-%d.map", (int)getpid());
	/* a map left by an earlier process of this pid is not ours (the
	   daemon refuses a map owned by another user); one we cannot remove
	   is an error, not a silent refusal later */
	if (unlink(path) == -1 && errno != ENOENT) {
		perror(path);
		return 1;
	}
	if ((f = fopen(strcmp(mode, "symlink") == 0 ? real : path, "w")) == NULL)
		return 1;
	if (strcmp(mode, "garbage") == 0) {
		fprintf(f, "zz\n");
		for (int i = 0; i < 16; i++) {
			void *q = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

			if (q == MAP_FAILED || mprotect(q, 4096, PROT_READ | PROT_EXEC) == -1)
				return 1;
		}
	} else
		fprintf(f, "%lx %zx pm_jit_spin\n", (unsigned long)(uintptr_t)(p + 64), sizeof(code));
	fclose(f);
	if (strcmp(mode, "symlink") == 0 && symlink(real, path) == -1)
		return 1;
	if (strcmp(mode, "chown") == 0 && chown(path, 65534, 65534) == -1)
		return 1;
	clock_gettime(CLOCK_MONOTONIC, &a);
	do {
		fn(1000000);
		clock_gettime(CLOCK_MONOTONIC, &b);
	} while ((b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9 < secs);
	return 0;
}
