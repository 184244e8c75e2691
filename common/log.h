/*
 * log.h - logging in the OpenBSD daemon style.  In the foreground lines go to
 * stderr; under systemd (JOURNAL_STREAM names our stderr) they go to the
 * journal with their priority and any structured fields given.
 */
#ifndef PERFMAPD_LOG_H
#define PERFMAPD_LOG_H

#include <stdarg.h>

void	log_init(const char *progname, int debug);
void	log_setverbose(int);
int	log_getverbose(void);
void	log_warn(const char *, ...) __attribute__((format(printf, 1, 2)));	/* + strerror(errno) */
void	log_warnx(const char *, ...) __attribute__((format(printf, 1, 2)));
void	log_info(const char *, ...) __attribute__((format(printf, 1, 2)));
void	log_debug(const char *, ...) __attribute__((format(printf, 1, 2)));
void	fatal(const char *, ...) __attribute__((format(printf, 1, 2), noreturn));
void	fatalx(const char *, ...) __attribute__((format(printf, 1, 2), noreturn));
/* An info line with one extra journal field, e.g. ("SEGMENT", path, "closed %s", path). */
void	log_info_field(const char *field, const char *value, const char *, ...)
	    __attribute__((format(printf, 3, 4)));

#endif
