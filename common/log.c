/*
 * log.c - see log.h.  Journal output is chosen once, at log_init(), by
 * comparing JOURNAL_STREAM ("dev:ino") with our stderr, as sd_journal does.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <sys/stat.h>
#include <systemd/sd-journal.h>

#include "log.h"

static const char	*log_progname = "perfmapd";
static int		 log_verbose;
static int		 log_journal;

static int
stderr_is_journal(void)
{
	const char	*js = getenv("JOURNAL_STREAM");
	unsigned long	 dev, ino;
	struct stat	 st;

	if (js == NULL || sscanf(js, "%lu:%lu", &dev, &ino) != 2)
		return 0;
	if (fstat(2, &st) == -1)
		return 0;
	return st.st_dev == (dev_t)dev && st.st_ino == (ino_t)ino;
}

void
log_init(const char *progname, int debug)
{
	log_progname = progname;
	log_verbose = debug;
	log_journal = stderr_is_journal();
}

void
log_setverbose(int v)
{
	log_verbose = v;
}

int
log_getverbose(void)
{
	return log_verbose;
}

static void
vlog(int pri, const char *field, const char *value, const char *fmt, va_list ap)
{
	char	 msg[4096];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (log_journal) {
		if (field != NULL)
			sd_journal_send("MESSAGE=%s", msg, "PRIORITY=%d", pri,
			    "SYSLOG_IDENTIFIER=%s", log_progname,
			    "%s=%s", field, value, NULL);
		else
			sd_journal_send("MESSAGE=%s", msg, "PRIORITY=%d", pri,
			    "SYSLOG_IDENTIFIER=%s", log_progname, NULL);
		return;
	}
	fprintf(stderr, "%s: %s\n", log_progname, msg);
}

#define LOGFN(name, pri, cond)					\
void								\
name(const char *fmt, ...)					\
{								\
	va_list	ap;						\
	if (!(cond))						\
		return;						\
	va_start(ap, fmt);					\
	vlog(pri, NULL, NULL, fmt, ap);				\
	va_end(ap);						\
}

LOGFN(log_warnx, LOG_WARNING, 1)
LOGFN(log_info, LOG_INFO, 1)
LOGFN(log_debug, LOG_DEBUG, log_verbose)

void
log_info_field(const char *field, const char *value, const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	vlog(LOG_INFO, field, value, fmt, ap);
	va_end(ap);
}

static void
vlog_errno(int pri, int saved, const char *fmt, va_list ap)
{
	char	 buf[4096];
	size_t	 n;

	vsnprintf(buf, sizeof(buf), fmt, ap);
	n = strlen(buf);
	if (saved != 0 && n < sizeof(buf))
		snprintf(buf + n, sizeof(buf) - n, ": %s", strerror(saved));
	if (log_journal)
		sd_journal_send("MESSAGE=%s", buf, "PRIORITY=%d", pri,
		    "SYSLOG_IDENTIFIER=%s", log_progname, NULL);
	else
		fprintf(stderr, "%s: %s\n", log_progname, buf);
}

void
log_warn(const char *fmt, ...)
{
	int	 saved = errno;
	va_list	 ap;

	va_start(ap, fmt);
	vlog_errno(LOG_WARNING, saved, fmt, ap);
	va_end(ap);
	errno = saved;
}

void
fatal(const char *fmt, ...)
{
	int	 saved = errno;
	va_list	 ap;

	va_start(ap, fmt);
	vlog_errno(LOG_CRIT, saved, fmt, ap);
	va_end(ap);
	exit(1);
}

void
fatalx(const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	vlog_errno(LOG_CRIT, 0, fmt, ap);
	va_end(ap);
	exit(1);
}
