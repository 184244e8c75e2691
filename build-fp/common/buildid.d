build-fp/common/buildid.o: common/buildid.c common/buildid.h \
 common/perf_abi.h
common/buildid.h:
common/perf_abi.h:
