build-fp/common/ordered.o: common/ordered.c common/perfdata.h \
 common/compress.h common/perf_abi.h common/hostinfo.h common/record.h
common/perfdata.h:
common/compress.h:
common/perf_abi.h:
common/hostinfo.h:
common/record.h:
