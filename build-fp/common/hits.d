build-fp/common/hits.o: common/hits.c common/hits.h common/perfdata.h \
 common/compress.h common/perf_abi.h common/hostinfo.h common/record.h
common/hits.h:
common/perfdata.h:
common/compress.h:
common/perf_abi.h:
common/hostinfo.h:
common/record.h:
