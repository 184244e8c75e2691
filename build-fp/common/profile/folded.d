build-fp/common/profile/folded.o: common/profile/folded.c common/hash.h \
 common/profile/stacks.h common/profile/symbolize.h common/perf_abi.h
common/hash.h:
common/profile/stacks.h:
common/profile/symbolize.h:
common/perf_abi.h:
