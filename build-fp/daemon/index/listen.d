build-fp/daemon/index/listen.o: daemon/index/listen.c \
 daemon/index/index_int.h common/arena.h common/config.h \
 daemon/index/index.h common/perf_abi.h daemon/record/binaries.h \
 common/record.h common/perf_abi.h daemon/record/kernel.h \
 daemon/record/notify.h daemon/record/segment.h daemon/record/binaries.h \
 daemon/record/notify.h common/perfdata.h common/compress.h \
 common/hostinfo.h common/record.h
daemon/index/index_int.h:
common/arena.h:
common/config.h:
daemon/index/index.h:
common/perf_abi.h:
daemon/record/binaries.h:
common/record.h:
common/perf_abi.h:
daemon/record/kernel.h:
daemon/record/notify.h:
daemon/record/segment.h:
daemon/record/binaries.h:
daemon/record/notify.h:
common/perfdata.h:
common/compress.h:
common/hostinfo.h:
common/record.h:
