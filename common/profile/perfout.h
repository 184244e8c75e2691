/*
 * perfout.h - the perf format of a profile: one perf.data made of the
 * segments of the window, which stock `perf report -i` reads like a file
 * of `perf record`:
 *
 *	attrs	the segments' attributes, the same event merged into one,
 *		with the union of their sample ids (a daemon restart opens
 *		new events with new ids)
 *	data	every segment's records in order, its start state included
 *		(so each process and mapping is known before its samples),
 *		only the samples the window keeps; a segment whose clock
 *		differs from the first one's (a reboot in the window) has its
 *		times moved onto the first one's clock
 *	features  the union of the build-id tables, the first segment's
 *		host description, CLOCK_DATA of the output clock, and
 *		SAMPLE_TIME of the samples kept
 */
#ifndef PERFMAPD_PERFOUT_H
#define PERFMAPD_PERFOUT_H

#include <stddef.h>
#include <stdint.h>

#include "perfdata.h"

struct perfout;

/* Read the attributes of the segment files PATHS[N] and start writing to FD. */
int	perfout_open(struct perfout **, int fd, char *const *paths, size_t n, char *err,
	    size_t errlen);
/* A segment starts: its build-ids join the table; the first gives the host. */
int	perfout_segment(struct perfout *, struct perfdata_file *);
/* The output clock: wall and monotonic of one moment. */
void	perfout_clock(struct perfout *, int clockid, uint64_t wall_ns, uint64_t ref_ns);
/* One record, as it goes out; SAMPLE_TIME is the OUT_TIME of samples. */
int	perfout_write(struct perfout *, const void *rec, size_t len, int sample,
	    uint64_t out_time);
/* Finish the file (features, header); *BYTES its size.  Frees OUT. */
int	perfout_finish(struct perfout *, uint64_t *bytes, char *err, size_t errlen);
void	perfout_abort(struct perfout *);

#endif
