build-fp/daemon/index/table.o: daemon/index/table.c common/hash.h \
 daemon/index/index_int.h common/arena.h common/config.h \
 daemon/index/index.h common/perf_abi.h daemon/record/binaries.h \
 common/log.h common/record.h common/perf_abi.h \
 daemon/record/buildid_reader.h common/walltime.h
common/hash.h:
daemon/index/index_int.h:
common/arena.h:
common/config.h:
daemon/index/index.h:
common/perf_abi.h:
daemon/record/binaries.h:
common/log.h:
common/record.h:
common/perf_abi.h:
daemon/record/buildid_reader.h:
common/walltime.h:
