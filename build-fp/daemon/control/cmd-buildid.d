build-fp/daemon/control/cmd-buildid.o: daemon/control/cmd-buildid.c \
 daemon/control/command.h
daemon/control/command.h:
