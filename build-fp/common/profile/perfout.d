build-fp/common/profile/perfout.o: common/profile/perfout.c common/hash.h \
 common/profile/perfout.h common/perfdata.h common/compress.h \
 common/perf_abi.h common/hostinfo.h common/record.h
common/hash.h:
common/profile/perfout.h:
common/perfdata.h:
common/compress.h:
common/perf_abi.h:
common/hostinfo.h:
common/record.h:
