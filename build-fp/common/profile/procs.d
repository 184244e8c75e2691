build-fp/common/profile/procs.o: common/profile/procs.c common/hash.h \
 common/profile/procs.h common/profile/symbolize.h common/perf_abi.h
common/hash.h:
common/profile/procs.h:
common/profile/symbolize.h:
common/perf_abi.h:
