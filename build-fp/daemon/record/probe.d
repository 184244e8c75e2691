build-fp/daemon/record/probe.o: daemon/record/probe.c common/buildid.h \
 common/perf_abi.h common/log.h daemon/record/probe.h common/config.h \
 common/perf_abi.h
common/buildid.h:
common/perf_abi.h:
common/log.h:
daemon/record/probe.h:
common/config.h:
common/perf_abi.h:
