build-fp/daemon/record/binaries.o: daemon/record/binaries.c \
 daemon/record/binaries.h common/arena.h common/perf_abi.h common/hash.h \
 common/record.h common/perf_abi.h
daemon/record/binaries.h:
common/arena.h:
common/perf_abi.h:
common/hash.h:
common/record.h:
common/perf_abi.h:
