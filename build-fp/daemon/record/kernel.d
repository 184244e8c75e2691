build-fp/daemon/record/kernel.o: daemon/record/kernel.c common/buildid.h \
 common/perf_abi.h daemon/record/kernel.h common/perf_abi.h
common/buildid.h:
common/perf_abi.h:
daemon/record/kernel.h:
common/perf_abi.h:
