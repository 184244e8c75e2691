/*
 * procscan.h - the model at start-up, from /proc (see procscan.c).
 */
#ifndef PERFMAPD_PROCSCAN_H
#define PERFMAPD_PROCSCAN_H

#include "buildid_reader.h"
#include "model.h"

/* Fill the model from /proc; returns the number of processes seen. */
int	procscan_run(struct model *, struct buildid_reader *);

#endif
