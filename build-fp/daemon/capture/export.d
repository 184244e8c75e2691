build-fp/daemon/capture/export.o: daemon/capture/export.c \
 common/buildid.h common/perf_abi.h daemon/capture/capture_int.h \
 common/bidcache.h daemon/capture/capture.h common/config.h \
 common/perf_abi.h common/record.h common/hits.h common/log.h \
 common/proto.h
common/buildid.h:
common/perf_abi.h:
daemon/capture/capture_int.h:
common/bidcache.h:
daemon/capture/capture.h:
common/config.h:
common/perf_abi.h:
common/record.h:
common/hits.h:
common/log.h:
common/proto.h:
