build-fp/daemon/control/interfaces.o: daemon/control/interfaces.c \
 daemon/control/interfaces.h
daemon/control/interfaces.h:
