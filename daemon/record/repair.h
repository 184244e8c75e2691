/*
 * repair.h - finish segments torn by a crash (NAME.partial at start-up).
 */
#ifndef PERFMAPD_REPAIR_H
#define PERFMAPD_REPAIR_H

#include <stddef.h>

/*
 * Keep the records up to the last whole one, rebuild the build-id table
 * from the segment's own MMAP2 records, write the features and the header,
 * and rename NAME.partial to NAME.  Returns 0; 1 when not one record was
 * whole (the file is removed: there is nothing to keep, and perf refuses a
 * perf.data without data; or, when something that is not a record is
 * where the first should be, kept as NAME.corrupt); or -1 with ERR set
 * (the file is then left as it was).
 */
int	repair_segment(const char *partial, char *err, size_t errlen);

/*
 * Repair every segment's NAME.partial in DIR (perf-*.data.partial);
 * returns how many were repaired or removed, and in *LEFT (if not NULL)
 * how many could not be.
 */
int	repair_partials(const char *dir, int *left);

/* At start-up: the segments a power loss tore (renamed .partial), then repair_partials. */
int	repair_all(const char *dir);

#endif
