/*
 * userfs.h - file systems a user's process serves (userfs.c): what the
 * daemon's threads must not wait on in a user's hands.
 */
#ifndef PERFMAPD_USERFS_H
#define PERFMAPD_USERFS_H

#include <stddef.h>
#include <stdint.h>

#include "buildid_reader.h"

/*
 * 1, with the reason in WHY, for an open file or O_PATH handle a user's
 * process serves (FUSE not mounted by root, or a block device with a loop
 * device beneath it while a FUSE server a user may run exists), or may
 * (while a FUSE server a user may run exists: a mount the daemon's table
 * does not have, reached through process PID, 0: none, unless PID's own
 * and root's or of a type that passes no read on), found without asking
 * the file system anything.  Thread-safe.  The capture worker, whose reads
 * have no deadline, reads nothing it refuses: its openers show it every
 * handle (struct bid_guard), userfs_guard(WHY, PID) being that guard, its
 * reason into WHY; the build-id reader's threads read such files one
 * thread per device, on three devices at most (resolver.c).
 */
int	userfs_fd(int fd, uint32_t pid, char *why, size_t whylen);

/*
 * Is FD (an open file or O_PATH handle) on a mount of the host's mount
 * namespace (PID 1's, as procfs_host_ns has it: the daemon's own may be a
 * private one)?  1: yes; 0: no, a mount another namespace has
 * (reached through /proc/PID/root, or a descriptor passed on: the kernel
 * names its files by their paths in that namespace, so a user's bind
 * mount over /usr/bin/passwd in a namespace of theirs is "/usr/bin/passwd"
 * also when a process of the host's maps it); -1: not known (no mount id
 * from statx or, before Linux 5.8, from the descriptor's fdinfo; or PID
 * 1's mountinfo unread): the name is then not proven the host's either.
 * Asks the file system nothing.  Thread-safe.
 */
int	userfs_host_mount(int fd);
/*
 * FD's mount id as its /proc/self/fdinfo entry gives it ("mnt_id:"), the
 * one userfs_host_mount uses where statx has none (before Linux 5.8);
 * 0 if not read.  Its own function for the tests: this kernel's statx
 * always answers.
 */
uint64_t userfs_fdinfo_mount_id(int fd);
#define userfs_guard(why, pid)	(&(struct bid_guard){ userfs_fd, (why), sizeof(why), (pid) })

#endif
