/*
 * procfs.h - what the kernel's /proc files say of a process: never a
 * user's path, but read in bounded buffers all the same.
 */
#ifndef PERFMAPD_PROCFS_H
#define PERFMAPD_PROCFS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/*
 * The start time of a process from its /proc/PID/stat text (field 22,
 * after the last ')': the name may hold spaces and parentheses), in clock
 * ticks since boot; 0 if it cannot be read.
 */
uint64_t procfs_stat_start(const char *stat);
/*
 * The same of the process /proc/PID names, DIRFD its directory (-1: by
 * PID), or 0.
 */
uint64_t procfs_start(int dirfd, uint32_t pid);
/*
 * A small /proc file, PATH under DIRFD (-1: as it is), into BUF (LEN
 * bytes, one read, NUL-terminated): 0, or -1.
 */
int	procfs_read(int dirfd, const char *path, char *buf, size_t len);
/*
 * A start time in clock ticks since boot on CLOCK_MONOTONIC, ns (the
 * events' clock), truncated as the ticks are: a process started at or
 * after the result.
 */
uint64_t procfs_start_mono(uint64_t ticks);
/*
 * The host's mount namespace and the initial user namespace (their
 * inodes): PID 1's mount namespace (ours where PID 1 cannot be looked
 * at) and our user namespace (a root daemon runs in the initial one).
 * 0 and 0 when /proc does not say.
 */
void	procfs_host_ns(uint64_t *mnt_ns, uint64_t *user_ns);

/*
 * The next whole line of F (a /proc file: maps, mountinfo) into BUF, its
 * newline dropped: 1, or 0 at the end.  A line longer than BUF is skipped
 * whole: read in parts, its later parts were taken for lines of their
 * own, and in /proc/PID/maps the end of a long path is the user's to
 * write ("... 400000-401000 r-xp ... /usr/lib/libc.so.6").
 */
int	procfs_line(FILE *f, char *buf, size_t len);

#endif
