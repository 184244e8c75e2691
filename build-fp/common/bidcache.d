build-fp/common/bidcache.o: common/bidcache.c common/bidcache.h \
 common/perf_abi.h common/buildid.h common/record.h
common/bidcache.h:
common/perf_abi.h:
common/buildid.h:
common/record.h:
