build-fp/daemon/index/writer.o: daemon/index/writer.c common/buildid.h \
 common/perf_abi.h daemon/index/index_int.h common/arena.h \
 common/config.h daemon/index/index.h common/perf_abi.h \
 daemon/record/binaries.h common/index_reader.h common/log.h \
 common/record.h common/walltime.h
common/buildid.h:
common/perf_abi.h:
daemon/index/index_int.h:
common/arena.h:
common/config.h:
daemon/index/index.h:
common/perf_abi.h:
daemon/record/binaries.h:
common/index_reader.h:
common/log.h:
common/record.h:
common/walltime.h:
