build-fp/daemon/record/perflimits.o: daemon/record/perflimits.c \
 common/log.h daemon/record/perflimits.h
common/log.h:
daemon/record/perflimits.h:
