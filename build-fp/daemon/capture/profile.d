build-fp/daemon/capture/profile.o: daemon/capture/profile.c \
 daemon/capture/capture_int.h common/bidcache.h common/perf_abi.h \
 daemon/capture/capture.h common/config.h common/perf_abi.h \
 common/record.h common/log.h common/profile/profile.h common/proto.h
daemon/capture/capture_int.h:
common/bidcache.h:
common/perf_abi.h:
daemon/capture/capture.h:
common/config.h:
common/perf_abi.h:
common/record.h:
common/log.h:
common/profile/profile.h:
common/proto.h:
