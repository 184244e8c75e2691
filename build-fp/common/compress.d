build-fp/common/compress.o: common/compress.c common/compress.h \
 common/perf_abi.h
common/compress.h:
common/perf_abi.h:
