build-fp/common/perf_abi.o: common/perf_abi.c common/perf_abi.h
common/perf_abi.h:
