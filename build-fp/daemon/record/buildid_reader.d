build-fp/daemon/record/buildid_reader.o: daemon/record/buildid_reader.c \
 common/buildid.h common/perf_abi.h daemon/record/buildid_reader.h \
 common/record.h common/hash.h
common/buildid.h:
common/perf_abi.h:
daemon/record/buildid_reader.h:
common/record.h:
common/hash.h:
