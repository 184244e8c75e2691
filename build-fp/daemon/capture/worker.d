build-fp/daemon/capture/worker.o: daemon/capture/worker.c \
 common/buildid.h common/perf_abi.h daemon/capture/capture_int.h \
 common/bidcache.h daemon/capture/capture.h common/config.h \
 common/perf_abi.h common/record.h common/log.h \
 daemon/record/buildid_reader.h
common/buildid.h:
common/perf_abi.h:
daemon/capture/capture_int.h:
common/bidcache.h:
daemon/capture/capture.h:
common/config.h:
common/perf_abi.h:
common/record.h:
common/log.h:
daemon/record/buildid_reader.h:
