/*
 * interfaces.c - the Varlink interface definitions the daemon serves
 * (org.varlink.service.GetInterfaceDescription).  The .varlink files next
 * to this one are included into the program as they are, by the
 * assembler's .incbin, with a NUL after them: what a client reads is the
 * file in the repository, byte for byte, and the tests check it with a
 * Varlink IDL parser (tests/varlink/).
 */
#include <string.h>

#include "interfaces.h"

/* SYM: the bytes of FILE, then a NUL; read-only data. */
#define EMBED(sym, file)						\
	__asm__(".section .rodata\n"					\
	    ".global " #sym "\n"					\
	    ".type " #sym ", @object\n"					\
	    #sym ":\n"							\
	    ".incbin \"" file "\"\n"					\
	    ".byte 0\n"							\
	    ".size " #sym ", . - " #sym "\n"				\
	    ".previous\n")

EMBED(control_idl_service, "daemon/control/org.varlink.service.varlink");
EMBED(control_idl_perfmap, "daemon/control/io.perfmap.varlink");

extern const char control_idl_service[], control_idl_perfmap[];

const struct control_interface control_interfaces[] = {
	{ "org.varlink.service", control_idl_service },
	{ "io.perfmap", control_idl_perfmap },
};
const unsigned control_ninterfaces = sizeof(control_interfaces) / sizeof(control_interfaces[0]);

const struct control_interface *
control_interface_find(const char *name, unsigned len)
{
	unsigned i;

	for (i = 0; i < control_ninterfaces; i++)
		if (strlen(control_interfaces[i].name) == len &&
		    memcmp(control_interfaces[i].name, name, len) == 0)
			return &control_interfaces[i];
	return NULL;
}
