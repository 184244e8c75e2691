build-fp/daemon/capture/kernel.o: daemon/capture/kernel.c \
 common/buildid.h common/perf_abi.h daemon/capture/capture_int.h \
 common/bidcache.h daemon/capture/capture.h common/config.h \
 common/perf_abi.h common/record.h common/log.h
common/buildid.h:
common/perf_abi.h:
daemon/capture/capture_int.h:
common/bidcache.h:
daemon/capture/capture.h:
common/config.h:
common/perf_abi.h:
common/record.h:
common/log.h:
