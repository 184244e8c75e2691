build-fp/daemon/control/querier.o: daemon/control/querier.c \
 daemon/control/control.h common/proto.h daemon/daemon.h common/config.h \
 daemon/record/binaries.h common/arena.h common/perf_abi.h \
 daemon/record/perflimits.h daemon/record/recorder.h \
 daemon/record/binaries.h daemon/record/buildid_reader.h common/record.h \
 common/perf_abi.h daemon/record/events.h daemon/record/probe.h \
 daemon/record/ring.h daemon/record/flight.h daemon/record/kernel.h \
 daemon/record/model.h daemon/record/notify.h common/perfdata.h \
 common/compress.h common/hostinfo.h common/record.h \
 daemon/record/resolver.h daemon/record/segment.h daemon/record/synth.h \
 daemon/statedir.h daemon/index/index.h common/index_reader.h \
 common/log.h common/query.h daemon/control/querier.h
daemon/control/control.h:
common/proto.h:
daemon/daemon.h:
common/config.h:
daemon/record/binaries.h:
common/arena.h:
common/perf_abi.h:
daemon/record/perflimits.h:
daemon/record/recorder.h:
daemon/record/binaries.h:
daemon/record/buildid_reader.h:
common/record.h:
common/perf_abi.h:
daemon/record/events.h:
daemon/record/probe.h:
daemon/record/ring.h:
daemon/record/flight.h:
daemon/record/kernel.h:
daemon/record/model.h:
daemon/record/notify.h:
common/perfdata.h:
common/compress.h:
common/hostinfo.h:
common/record.h:
daemon/record/resolver.h:
daemon/record/segment.h:
daemon/record/synth.h:
daemon/statedir.h:
daemon/index/index.h:
common/index_reader.h:
common/log.h:
common/query.h:
daemon/control/querier.h:
