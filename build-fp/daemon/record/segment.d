build-fp/daemon/record/segment.o: daemon/record/segment.c common/hash.h \
 common/log.h common/record.h common/perf_abi.h daemon/record/segment.h \
 daemon/record/binaries.h common/arena.h common/perf_abi.h \
 daemon/record/notify.h common/perfdata.h common/compress.h \
 common/hostinfo.h common/record.h
common/hash.h:
common/log.h:
common/record.h:
common/perf_abi.h:
daemon/record/segment.h:
daemon/record/binaries.h:
common/arena.h:
common/perf_abi.h:
daemon/record/notify.h:
common/perfdata.h:
common/compress.h:
common/hostinfo.h:
common/record.h:
