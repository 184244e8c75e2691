build-fp/daemon/capture/store.o: daemon/capture/store.c common/buildid.h \
 common/perf_abi.h daemon/capture/capture_int.h common/bidcache.h \
 daemon/capture/capture.h common/config.h common/perf_abi.h \
 common/record.h common/log.h common/perfdata.h common/compress.h \
 common/hostinfo.h common/record.h common/proto.h
common/buildid.h:
common/perf_abi.h:
daemon/capture/capture_int.h:
common/bidcache.h:
daemon/capture/capture.h:
common/config.h:
common/perf_abi.h:
common/record.h:
common/log.h:
common/perfdata.h:
common/compress.h:
common/hostinfo.h:
common/record.h:
common/proto.h:
