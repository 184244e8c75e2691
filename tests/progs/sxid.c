/*
 * sxid.c - run a command under the seccomp filter systemd's
 * RestrictSUIDSGID=yes installs (seccomp_restrict_sxid, systemd's
 * src/shared/seccomp-util.c): the calls that set a mode refuse the setuid
 * and setgid bits with EPERM (chmod, fchmod, fchmodat, open, openat,
 * creat, mkdir, mkdirat, mknod, mknodat), and openat2, whose mode systemd
 * cannot inspect, fails with ENOSYS.  So a test can show what a unit
 * line does to the daemon without systemd as PID 1.
 * Usage: sxid COMMAND [ARG...]
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

#if defined(__x86_64__)
#define ARCH	AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define ARCH	AUDIT_ARCH_AARCH64
#else
#error "sxid: an architecture the test does not know"
#endif
#ifndef SYS_openat2
#define SYS_openat2	437
#endif

#define ARG_LO(i)	(offsetof(struct seccomp_data, args) + 8 * (i))	/* little endian */
#define RET(v)		BPF_STMT(BPF_RET | BPF_K, (v))
/* syscall NR's mode is argument I: refused (EPERM) with S_ISUID or S_ISGID */
#define MODE_AT(nr, i) \
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 4), \
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LO(i)), \
	BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, S_ISUID | S_ISGID, 0, 1), \
	RET(SECCOMP_RET_ERRNO | EPERM), \
	RET(SECCOMP_RET_ALLOW)

int
main(int argc, char **argv)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ARCH, 1, 0),
		RET(SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_openat2, 0, 1),
		RET(SECCOMP_RET_ERRNO | ENOSYS),
#ifdef SYS_chmod
		MODE_AT(SYS_chmod, 1),
#endif
		MODE_AT(SYS_fchmod, 1),
		MODE_AT(SYS_fchmodat, 2),
#ifdef SYS_open
		MODE_AT(SYS_open, 2),
#endif
		MODE_AT(SYS_openat, 3),
#ifdef SYS_creat
		MODE_AT(SYS_creat, 1),
#endif
#ifdef SYS_mkdir
		MODE_AT(SYS_mkdir, 1),
#endif
		MODE_AT(SYS_mkdirat, 2),
#ifdef SYS_mknod
		MODE_AT(SYS_mknod, 1),
#endif
		MODE_AT(SYS_mknodat, 2),
		RET(SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(f) / sizeof(f[0]), f };

	if (argc < 2) {
		fprintf(stderr, "usage: sxid COMMAND [ARG...]\n");
		return 2;
	}
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) == -1) {
		perror("sxid: seccomp");
		return 1;
	}
	execvp(argv[1], argv + 1);
	perror(argv[1]);
	return 127;
}
