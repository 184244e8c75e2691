build-fp/common/profile/pprof.o: common/profile/pprof.c common/buildid.h \
 common/perf_abi.h build-fp/gen/profile.pb-c.h common/profile/stacks.h \
 common/profile/symbolize.h common/perf_abi.h
common/buildid.h:
common/perf_abi.h:
build-fp/gen/profile.pb-c.h:
common/profile/stacks.h:
common/profile/symbolize.h:
common/perf_abi.h:
