build-fp/daemon/capture/evict.o: daemon/capture/evict.c \
 daemon/capture/capture_int.h common/bidcache.h common/perf_abi.h \
 daemon/capture/capture.h common/config.h common/perf_abi.h \
 common/record.h common/log.h common/walltime.h
daemon/capture/capture_int.h:
common/bidcache.h:
common/perf_abi.h:
daemon/capture/capture.h:
common/config.h:
common/perf_abi.h:
common/record.h:
common/log.h:
common/walltime.h:
