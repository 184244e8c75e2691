build-fp/daemon/capture/capture.o: daemon/capture/capture.c \
 common/buildid.h common/perf_abi.h daemon/capture/capture_int.h \
 common/bidcache.h daemon/capture/capture.h common/config.h \
 common/perf_abi.h common/record.h daemon/control/control.h \
 common/proto.h common/log.h daemon/record/binaries.h common/arena.h \
 daemon/record/kernel.h daemon/record/notify.h daemon/record/segment.h \
 daemon/record/binaries.h daemon/record/notify.h common/perfdata.h \
 common/compress.h common/hostinfo.h common/record.h common/walltime.h
common/buildid.h:
common/perf_abi.h:
daemon/capture/capture_int.h:
common/bidcache.h:
daemon/capture/capture.h:
common/config.h:
common/perf_abi.h:
common/record.h:
daemon/control/control.h:
common/proto.h:
common/log.h:
daemon/record/binaries.h:
common/arena.h:
daemon/record/kernel.h:
daemon/record/notify.h:
daemon/record/segment.h:
daemon/record/binaries.h:
daemon/record/notify.h:
common/perfdata.h:
common/compress.h:
common/hostinfo.h:
common/record.h:
common/walltime.h:
