build-fp/daemon/record/notify.o: daemon/record/notify.c \
 daemon/record/notify.h
daemon/record/notify.h:
