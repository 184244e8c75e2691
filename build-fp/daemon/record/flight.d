build-fp/daemon/record/flight.o: daemon/record/flight.c \
 daemon/record/flight.h
daemon/record/flight.h:
