build-fp/common/index_reader.o: common/index_reader.c \
 common/index_reader.h common/walltime.h common/buildid.h \
 common/perf_abi.h
common/index_reader.h:
common/walltime.h:
common/buildid.h:
common/perf_abi.h:
