/*
 * bench_model.c - the model's memory and speed on a big host: NPROCS
 * processes each mapping NFILES files as the /proc scan adds them (one
 * model_add_map per map, names shared across processes as on a real host),
 * then a build-id set on every map, a lookup of every thread, and the same
 * processes torn down by EXIT.  Bytes per map are the heap's growth
 * (mallinfo2) over the maps held; times are wall clock.
 * Usage: bench_model [-p NPROCS] [-m NFILES]   (10000 x 200 by default)
 */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "record/model.h"

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int
main(int argc, char **argv)
{
	struct model m;
	struct record_mmap r;
	uint8_t	 id[20];
	char	 name[128];
	size_t	 heap0, heap1;
	double	 t0, t_add, t_bid, t_find, t_exit;
	unsigned long nprocs = 10000, nfiles = 200, pid, i, found = 0;
	int	 ch;

	while ((ch = getopt(argc, argv, "p:m:")) != -1)
		switch (ch) {
		case 'p':
			nprocs = strtoul(optarg, NULL, 10);
			break;
		case 'm':
			nfiles = strtoul(optarg, NULL, 10);
			break;
		default:
			fprintf(stderr, "usage: bench_model [-p NPROCS] [-m NFILES]\n");
			return 2;
		}
	heap0 = mallinfo2().uordblks;
	if (model_init(&m) < 0)
		return 1;
	t0 = now();
	for (pid = 1; pid <= nprocs; pid++) {
		model_set_comm(&m, (uint32_t)pid, (uint32_t)pid, "sleeper", 0);
		for (i = 0; i < nfiles; i++) {
			snprintf(name, sizeof(name),
			    "/tmp/mm/manymaps-a-rather-long-file-name-to-make-the-start-"
			    "state-big-%05lu.so", i);
			memset(&r, 0, sizeof(r));
			r.pid = r.tid = (uint32_t)pid;
			r.addr = 0x7f0000000000ULL + i * 0x2000;
			r.len = 0x1000;
			r.has_inode = 1;
			r.maj = 8;
			r.ino = 100000 + i;
			r.prot = 5;
			r.flags = 2;
			r.filename = name;
			if (model_add_map(&m, &r, 0, (uint32_t)-1) < 0) {
				fprintf(stderr, "bench_model: out of memory\n");
				return 1;
			}
		}
	}
	t_add = now() - t0;
	/* the scan's reads answer: every map gets its file's build-id */
	t0 = now();
	for (pid = 1; pid <= nprocs; pid++)
		for (i = 0; i < nfiles; i++) {
			memset(id, 0, sizeof(id));
			memcpy(id, &i, sizeof(i));
			model_set_map_buildid(&m, (uint32_t)pid, 0x7f0000000000ULL + i * 0x2000,
			    id, 20, 3);
		}
	t_bid = now() - t0;
	heap1 = mallinfo2().uordblks;
	t0 = now();
	for (pid = 1; pid <= nprocs; pid++)
		found += model_comm(&m, (uint32_t)pid, (uint32_t)pid) != NULL;
	t_find = now() - t0;
	printf("model: %lu processes x %lu maps = %zu maps: %.1f bytes/map (heap %.1f MB), "
	    "add %.0f ns/map, build-id %.0f ns/map, lookup %.0f ns/thread (%lu found)\n",
	    nprocs, nfiles, m.nmaps, (double)(heap1 - heap0) / (double)m.nmaps,
	    (double)(heap1 - heap0) / 1e6, t_add * 1e9 / (double)m.nmaps,
	    t_bid * 1e9 / (double)m.nmaps, t_find * 1e9 / (double)nprocs, found);
	t0 = now();
	for (pid = 1; pid <= nprocs; pid++)
		model_exit(&m, (uint32_t)pid, (uint32_t)pid);
	t_exit = now() - t0;
	printf("model: exit %.0f ns/process, %zu processes left, heap %zd bytes over the start\n",
	    t_exit * 1e9 / (double)nprocs, m.nprocs, (ssize_t)(mallinfo2().uordblks - heap0));
	model_free(&m);
	return found == nprocs ? 0 : 1;
}
