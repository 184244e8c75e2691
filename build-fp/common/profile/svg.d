build-fp/common/profile/svg.o: common/profile/svg.c common/hash.h \
 common/profile/stacks.h common/profile/symbolize.h common/perf_abi.h
common/hash.h:
common/profile/stacks.h:
common/profile/symbolize.h:
common/perf_abi.h:
