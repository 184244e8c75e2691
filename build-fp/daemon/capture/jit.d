build-fp/daemon/capture/jit.o: daemon/capture/jit.c \
 daemon/capture/capture_int.h common/bidcache.h common/perf_abi.h \
 daemon/capture/capture.h common/config.h common/perf_abi.h \
 common/record.h common/log.h common/profile/profile.h \
 common/profile/symbolize.h
daemon/capture/capture_int.h:
common/bidcache.h:
common/perf_abi.h:
daemon/capture/capture.h:
common/config.h:
common/perf_abi.h:
common/record.h:
common/log.h:
common/profile/profile.h:
common/profile/symbolize.h:
