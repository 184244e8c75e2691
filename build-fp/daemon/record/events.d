build-fp/daemon/record/events.o: daemon/record/events.c \
 daemon/record/events.h common/config.h daemon/record/probe.h \
 common/perf_abi.h common/record.h common/perf_abi.h daemon/record/ring.h \
 common/log.h
daemon/record/events.h:
common/config.h:
daemon/record/probe.h:
common/perf_abi.h:
common/record.h:
common/perf_abi.h:
daemon/record/ring.h:
common/log.h:
