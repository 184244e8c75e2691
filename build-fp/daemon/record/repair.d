build-fp/daemon/record/repair.o: daemon/record/repair.c common/buildid.h \
 common/perf_abi.h common/log.h common/record.h daemon/record/repair.h \
 daemon/record/segment.h daemon/record/binaries.h common/arena.h \
 common/perf_abi.h daemon/record/notify.h common/perfdata.h \
 common/compress.h common/hostinfo.h common/record.h
common/buildid.h:
common/perf_abi.h:
common/log.h:
common/record.h:
daemon/record/repair.h:
daemon/record/segment.h:
daemon/record/binaries.h:
common/arena.h:
common/perf_abi.h:
daemon/record/notify.h:
common/perfdata.h:
common/compress.h:
common/hostinfo.h:
common/record.h:
