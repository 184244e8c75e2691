build-fp/daemon/record/ring.o: daemon/record/ring.c daemon/record/ring.h
daemon/record/ring.h:
