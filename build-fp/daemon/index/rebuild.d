build-fp/daemon/index/rebuild.o: daemon/index/rebuild.c common/buildid.h \
 common/perf_abi.h daemon/index/index_int.h common/arena.h \
 common/config.h daemon/index/index.h common/perf_abi.h \
 daemon/record/binaries.h common/log.h common/perfdata.h \
 common/compress.h common/hostinfo.h common/record.h common/record.h \
 daemon/record/model.h
common/buildid.h:
common/perf_abi.h:
daemon/index/index_int.h:
common/arena.h:
common/config.h:
daemon/index/index.h:
common/perf_abi.h:
daemon/record/binaries.h:
common/log.h:
common/perfdata.h:
common/compress.h:
common/hostinfo.h:
common/record.h:
common/record.h:
daemon/record/model.h:
