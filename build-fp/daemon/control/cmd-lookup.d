build-fp/daemon/control/cmd-lookup.o: daemon/control/cmd-lookup.c \
 daemon/control/command.h
daemon/control/command.h:
