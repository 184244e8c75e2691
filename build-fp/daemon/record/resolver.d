build-fp/daemon/record/resolver.o: daemon/record/resolver.c common/log.h \
 daemon/record/resolver.h daemon/record/buildid_reader.h common/record.h \
 common/perf_abi.h
common/log.h:
daemon/record/resolver.h:
daemon/record/buildid_reader.h:
common/record.h:
common/perf_abi.h:
