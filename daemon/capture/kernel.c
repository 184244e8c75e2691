/*
 * kernel.c - copies of what the kernel provides into the build-id cache:
 * /proc/kallsyms (for [kernel.kallsyms]), module files (decompressed), and
 * the vDSO image, read from our own address space.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "buildid.h"
#include "capture_int.h"
#include "log.h"

static int
slurp(const char *path, size_t max, char **out, size_t *outlen)
{
	char	*buf = NULL, *nb;
	size_t	 len = 0, cap = 0;
	ssize_t	 n;
	int	 fd, rc = 0;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return -errno;
	for (;;) {
		if (len + 1 >= cap) {
			if (cap >= max) {
				rc = -EFBIG;
				break;
			}
			cap = cap ? cap * 2 : 1 << 20;
			if ((nb = realloc(buf, cap)) == NULL) {
				rc = -ENOMEM;
				break;
			}
			buf = nb;
		}
		if ((n = read(fd, buf + len, cap - len - 1)) < 0) {
			if (errno == EINTR)
				continue;
			rc = -errno;
			break;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	if (rc < 0) {
		free(buf);
		return rc;
	}
	buf[len] = '\0';
	*out = buf;
	*outlen = len;
	return 0;
}

/* The kernel's symbols under its build-id; refused when the addresses are hidden. */
int
store_kallsyms(struct capture *c, const uint8_t *id, size_t idlen, char *file,
    size_t filelen, char *why, size_t whylen)
{
	char	 err[512], *buf = NULL, *p;
	uint8_t	 kid[BUILD_ID_MAX];
	size_t	 len = 0, i, kidlen;
	int	 rc, nonzero = 0;

	/* The loop sets it at each segment's start (capture_kernel). */
	pthread_mutex_lock(&c->mu);
	kidlen = c->kernel_idlen;
	memcpy(kid, c->kernel_id, sizeof(kid));
	pthread_mutex_unlock(&c->mu);
	if (kidlen == 0 || idlen != kidlen || memcmp(id, kid, idlen) != 0) {
		reason_add(why, whylen, "not the running kernel's build-id");
		return -ESRCH;
	}
	if ((rc = slurp("/proc/kallsyms", KALLSYMS_MAX, &buf, &len)) < 0) {
		reason_add(why, whylen, "/proc/kallsyms: %s", strerror(-rc));
		return rc;
	}
	/* kptr_restrict shows every address as zeros. */
	for (p = buf, i = 0; p < buf + len && i < 100; i++) {
		char	*nl = memchr(p, '\n', (size_t)(buf + len - p));

		if (strspn(p, "0") < strcspn(p, " \n")) {
			nonzero = 1;
			break;
		}
		if (nl == NULL)
			break;
		p = nl + 1;
	}
	if (!nonzero) {
		free(buf);
		reason_add(why, whylen, "/proc/kallsyms shows no addresses "
		    "(kernel.kptr_restrict; perfmapd needs CAP_SYSLOG and kptr_restrict < 2)");
		return -EPERM;
	}
	rc = bidcache_add_buf(&c->cache, BIDCACHE_KERNEL, id, idlen, buf, len, file, filelen,
	    err, sizeof(err));
	free(buf);
	if (rc < 0)
		reason_add(why, whylen, "%s", err);
	return rc;
}

int
store_module(struct capture *c, const char *path, const uint8_t *id, size_t idlen,
    char *file, size_t filelen, char *why, size_t whylen)
{
	char	 err[512];
	size_t	 n = strlen(path);
	int	 fd, dfd, rc;

	if (path[0] != '/') {
		reason_add(why, whylen, "module file unknown (not in modules.dep)");
		return -ENOENT;
	}
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1) {
		rc = -errno;
		reason_add(why, whylen, "%s: %s", path, strerror(errno));
		return rc;
	}
	if ((n > 3 && strcmp(path + n - 3, ".xz") == 0) ||
	    (n > 4 && strcmp(path + n - 4, ".zst") == 0)) {
		dfd = bidcache_decompress(fd, path);
		close(fd);
		if (dfd < 0) {
			reason_add(why, whylen, "%s: cannot decompress: %s", path,
			    strerror(-dfd));
			return dfd;
		}
		fd = dfd;
	}
	rc = bidcache_add_fd(&c->cache, path, id, idlen, fd, file, filelen, err, sizeof(err));
	close(fd);
	if (rc < 0)
		reason_add(why, whylen, "%s: %s", path, err);
	return rc;
}

int
store_vdso(struct capture *c, const uint8_t *id, size_t idlen, char *file, size_t filelen,
    char *why, size_t whylen)
{
	char	 err[512];
	int	 rc;

	if (c->vdso_idlen <= 0 || (size_t)c->vdso_idlen != idlen ||
	    memcmp(c->vdso_id, id, idlen) != 0) {
		reason_add(why, whylen, "not this host's vDSO");
		return -ESRCH;
	}
	rc = bidcache_add_buf(&c->cache, BIDCACHE_VDSO, id, idlen, c->vdso, c->vdso_len,
	    file, filelen, err, sizeof(err));
	if (rc < 0)
		reason_add(why, whylen, "%s", err);
	return rc;
}

/* Our own vDSO: its image from memory and its build-id from its notes. */
