build-fp/daemon/control/cmd-ping.o: daemon/control/cmd-ping.c \
 daemon/control/command.h common/proto.h
daemon/control/command.h:
common/proto.h:
