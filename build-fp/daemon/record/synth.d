build-fp/daemon/record/synth.o: daemon/record/synth.c \
 daemon/record/buildid_reader.h common/record.h common/perf_abi.h \
 daemon/record/synth.h daemon/record/binaries.h common/arena.h \
 common/perf_abi.h daemon/record/kernel.h daemon/record/model.h \
 daemon/record/notify.h daemon/record/segment.h common/perfdata.h \
 common/compress.h common/hostinfo.h common/record.h
daemon/record/buildid_reader.h:
common/record.h:
common/perf_abi.h:
daemon/record/synth.h:
daemon/record/binaries.h:
common/arena.h:
common/perf_abi.h:
daemon/record/kernel.h:
daemon/record/model.h:
daemon/record/notify.h:
daemon/record/segment.h:
common/perfdata.h:
common/compress.h:
common/hostinfo.h:
common/record.h:
