build-fp/daemon/index/index.o: daemon/index/index.c \
 daemon/index/index_int.h common/arena.h common/config.h \
 daemon/index/index.h common/perf_abi.h daemon/record/binaries.h \
 common/index_reader.h common/log.h common/walltime.h
daemon/index/index_int.h:
common/arena.h:
common/config.h:
daemon/index/index.h:
common/perf_abi.h:
daemon/record/binaries.h:
common/index_reader.h:
common/log.h:
common/walltime.h:
