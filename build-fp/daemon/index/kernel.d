build-fp/daemon/index/kernel.o: daemon/index/kernel.c common/buildid.h \
 common/perf_abi.h daemon/index/index_int.h common/arena.h \
 common/config.h daemon/index/index.h common/perf_abi.h \
 daemon/record/binaries.h common/log.h common/record.h
common/buildid.h:
common/perf_abi.h:
daemon/index/index_int.h:
common/arena.h:
common/config.h:
daemon/index/index.h:
common/perf_abi.h:
daemon/record/binaries.h:
common/log.h:
common/record.h:
