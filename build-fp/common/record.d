build-fp/common/record.o: common/record.c common/record.h \
 common/perf_abi.h
common/record.h:
common/perf_abi.h:
