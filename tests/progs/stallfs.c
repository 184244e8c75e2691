/*
 * stallfs.c - a hostile FUSE file system for t_provenance_fuse.sh: one
 * file, "prog", with the bytes of an ELF program, that anyone may run -
 * but a stat(2), open(2) or read(2) by a thread of the process whose pid
 * is in PIDFILE (the daemon under test, once it is written; no other: the
 * host's other perfmapd instances are left alone) never gets an answer.
 * The daemon reading the build-id of the mapped file must give up, not
 * stall.  With "late", only its reads from 1 MiB on never get an answer:
 * the build-id read (the first pages) is answered, a copy of the whole
 * file is not (t_hostile_fuse.sh).
 * With "mark=STRING" the file is "img", the bytes of a file system image,
 * and no read of the 4 KiB block where STRING first is gets an answer,
 * whoever asks (a loop device on it reads from the kernel's threads, not
 * the daemon's: t_hostile_loop.sh); every other read does (a file
 * system's metadata, a probe of the device's tail).  PIDFILE is not read.
 * With "flush", everything is answered but the FLUSH of a close by the
 * daemon's threads: the file read, its close never returns
 * (t_hostile_readers.sh).  With "slow=MS", the daemon's requests are all
 * answered, each MS ms late, and there are two files, "prog" and "prog2"
 * (the same bytes, two inodes): reads of one device that follow each
 * other (t_hostile_readers.sh).
 * Usage: stallfs ELF MOUNTPOINT PIDFILE [late | mark=STRING | flush | slow=MS]
 * (runs in the foreground)
 */
#define _GNU_SOURCE
#define FUSE_USE_VERSION 31

#include <errno.h>
#include <fcntl.h>
#include <fuse.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

static char	*image;
static size_t	 imagelen;
static const char *pidfile;
static int	 late;
static int	 flushing;	/* "flush": only the daemon's FLUSH never answered */
static long	 slow_ms = -1;	/* "slow=": the daemon's requests answered this late */
static long long below = -1;	/* mark=: the block never answered; -1: not that mode */
static const char *name = "/prog";

static long
read_number(const char *path, const char *key)
{
	char	 line[256];
	long	 v = -1;
	FILE	*f;

	if ((f = fopen(path, "r")) == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL)
		if (key == NULL ? sscanf(line, "%ld", &v) == 1 :
		    (strncmp(line, key, strlen(key)) == 0 &&
		    sscanf(line + strlen(key), "%ld", &v) == 1))
			break;
	fclose(f);
	return v;
}

/* Is the calling thread one of the target's (its thread group)? */
static int
hostile(void)
{
	char	 path[64];
	long	 target = read_number(pidfile, NULL);

	if (target <= 0)
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)fuse_get_context()->pid);
	return read_number(path, "Tgid:") == target;
}

static void
never(void)
{
	if (slow_ms >= 0) {	/* late, not never */
		usleep((useconds_t)slow_ms * 1000);
		return;
	}
	for (;;)
		pause();
}

/* P one of the files: "prog", or in slow mode "prog2" too; its inode number, else 0. */
static int
file_ino(const char *p)
{
	if (strcmp(p, name) == 0)
		return 2;
	if (slow_ms >= 0 && strcmp(p, "/prog2") == 0)
		return 3;
	return 0;
}

static int
fs_getattr(const char *p, struct stat *st, struct fuse_file_info *fi)
{
	memset(st, 0, sizeof(*st));
	if (strcmp(p, "/") == 0) {
		st->st_mode = S_IFDIR | 0755;
		st->st_nlink = 2;
		return 0;
	}
	if (file_ino(p) == 0)
		return -ENOENT;
	if (below < 0 && !late && hostile())
		never();
	st->st_mode = S_IFREG | (below < 0 ? 0755 : 0644);
	st->st_nlink = 1;
	st->st_size = (off_t)imagelen;
	st->st_ino = (ino_t)file_ino(p);
	return 0;
}

static int
fs_readdir(const char *p, void *buf, fuse_fill_dir_t fill, off_t off,
    struct fuse_file_info *fi, enum fuse_readdir_flags flags)
{
	if (strcmp(p, "/") != 0)
		return -ENOENT;
	fill(buf, ".", NULL, 0, 0);
	fill(buf, "..", NULL, 0, 0);
	fill(buf, name + 1, NULL, 0, 0);
	if (slow_ms >= 0)
		fill(buf, "prog2", NULL, 0, 0);
	return 0;
}

static int
fs_open(const char *p, struct fuse_file_info *fi)
{
	if (file_ino(p) == 0)
		return -ENOENT;
	if (below < 0 && !late && hostile())
		never();
	return 0;
}

static int
fs_read(const char *p, char *buf, size_t size, off_t off, struct fuse_file_info *fi)
{
	if (below >= 0 ? off < below + 4096 && off + (off_t)size > below :
	    (!late || off + (off_t)size > (1 << 20)) && hostile())
		never();
	if ((size_t)off >= imagelen)
		return 0;
	if (size > imagelen - (size_t)off)
		size = imagelen - (size_t)off;
	memcpy(buf, image + off, size);
	return (int)size;
}

static int
fs_flush(const char *p, struct fuse_file_info *fi)
{
	(void)p;
	(void)fi;
	if (flushing && hostile())
		never();
	return 0;
}

static const struct fuse_operations ops = {
	.getattr = fs_getattr,
	.readdir = fs_readdir,
	.open = fs_open,
	.read = fs_read,
	.flush = fs_flush,
};

int
main(int argc, char **argv)
{
	char	*fargv[] = { argv[0], "-f", "-o", "allow_other,default_permissions,attr_timeout=0,entry_timeout=0",
		    argv[2], NULL };
	struct stat st;
	int	 fd;

	if (argc == 5 && strncmp(argv[4], "mark=", 5) == 0) {
		below = 0;	/* found below */
		name = "/img";
	} else if (argc == 5 && strcmp(argv[4], "flush") == 0) {
		flushing = 1;
	} else if (argc == 5 && strncmp(argv[4], "slow=", 5) == 0) {
		slow_ms = atol(argv[4] + 5);
	} else if (argc != 4 && !(argc == 5 && strcmp(argv[4], "late") == 0)) {
		fprintf(stderr, "usage: stallfs ELF MOUNTPOINT PIDFILE [late | mark=STRING | flush | "
		    "slow=MS]\n");
		return 2;
	}
	pidfile = argv[3];
	late = argc == 5 && below < 0 && slow_ms < 0;	/* flush too: no read stalls */
	if ((fd = open(argv[1], O_RDONLY)) == -1 || fstat(fd, &st) == -1 ||
	    (image = malloc((size_t)st.st_size)) == NULL ||
	    read(fd, image, (size_t)st.st_size) != st.st_size) {
		perror(argv[1]);
		return 1;
	}
	imagelen = (size_t)st.st_size;
	close(fd);
	if (below == 0) {
		const char *mark = argv[4] + 5;
		char	*at = memmem(image, imagelen, mark, strlen(mark));

		if (at == NULL || strlen(mark) < 8) {
			fprintf(stderr, "stallfs: %s: no mark %s of 8 bytes or more\n", argv[1], mark);
			return 1;
		}
		below = (long long)(at - image) & ~4095LL;
	}
	/* Threads, so that one stuck request does not hold up the others. */
	return fuse_main(5, fargv, &ops, NULL);
}
