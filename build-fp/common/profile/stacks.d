build-fp/common/profile/stacks.o: common/profile/stacks.c common/hash.h \
 common/profile/stacks.h common/profile/symbolize.h common/perf_abi.h
common/hash.h:
common/profile/stacks.h:
common/profile/symbolize.h:
common/perf_abi.h:
