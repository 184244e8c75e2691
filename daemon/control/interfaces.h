/*
 * interfaces.h - the Varlink interfaces the control socket speaks, with
 * their definitions as the repository has them (daemon/control/NAME.varlink,
 * embedded at build time): org.varlink.service and io.perfmap.
 */
#ifndef PERFMAPD_INTERFACES_H
#define PERFMAPD_INTERFACES_H

struct control_interface {
	const char	*name;		/* "io.perfmap" */
	const char	*description;	/* the .varlink file, byte for byte */
};

extern const struct control_interface control_interfaces[];
extern const unsigned control_ninterfaces;

/* The interface called NAME, or NULL. */
const struct control_interface *control_interface_find(const char *name, unsigned len);

#endif
