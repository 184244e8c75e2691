build-fp/daemon/control/cmd-history.o: daemon/control/cmd-history.c \
 daemon/control/command.h
daemon/control/command.h:
