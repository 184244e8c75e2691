build-fp/common/profile/symbolize.o: common/profile/symbolize.c \
 common/bidcache.h common/perf_abi.h common/buildid.h common/hash.h \
 common/record.h common/profile/symbolize.h common/perf_abi.h
common/bidcache.h:
common/perf_abi.h:
common/buildid.h:
common/hash.h:
common/record.h:
common/profile/symbolize.h:
common/perf_abi.h:
