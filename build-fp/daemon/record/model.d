build-fp/daemon/record/model.o: daemon/record/model.c common/hash.h \
 daemon/record/model.h common/record.h common/perf_abi.h
common/hash.h:
daemon/record/model.h:
common/record.h:
common/perf_abi.h:
