build-fp/daemon/record/recorder.o: daemon/record/recorder.c common/log.h \
 daemon/record/procscan.h daemon/record/buildid_reader.h common/record.h \
 common/perf_abi.h daemon/record/model.h daemon/record/resolver.h \
 daemon/record/recorder.h daemon/record/binaries.h common/arena.h \
 common/perf_abi.h common/config.h daemon/record/events.h \
 daemon/record/probe.h daemon/record/ring.h daemon/record/flight.h \
 daemon/record/kernel.h daemon/record/notify.h common/perfdata.h \
 common/compress.h common/hostinfo.h common/record.h \
 daemon/record/segment.h daemon/record/synth.h daemon/record/repair.h
common/log.h:
daemon/record/procscan.h:
daemon/record/buildid_reader.h:
common/record.h:
common/perf_abi.h:
daemon/record/model.h:
daemon/record/resolver.h:
daemon/record/recorder.h:
daemon/record/binaries.h:
common/arena.h:
common/perf_abi.h:
common/config.h:
daemon/record/events.h:
daemon/record/probe.h:
daemon/record/ring.h:
daemon/record/flight.h:
daemon/record/kernel.h:
daemon/record/notify.h:
common/perfdata.h:
common/compress.h:
common/hostinfo.h:
common/record.h:
daemon/record/segment.h:
daemon/record/synth.h:
daemon/record/repair.h:
