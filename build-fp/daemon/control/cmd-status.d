build-fp/daemon/control/cmd-status.o: daemon/control/cmd-status.c \
 daemon/control/control.h common/proto.h daemon/capture/capture.h \
 common/config.h common/perf_abi.h common/record.h common/perf_abi.h \
 daemon/control/command.h daemon/index/index.h daemon/daemon.h \
 daemon/record/binaries.h common/arena.h daemon/record/perflimits.h \
 daemon/record/recorder.h daemon/record/binaries.h \
 daemon/record/buildid_reader.h daemon/record/events.h \
 daemon/record/probe.h daemon/record/ring.h daemon/record/flight.h \
 daemon/record/kernel.h daemon/record/model.h daemon/record/notify.h \
 common/perfdata.h common/compress.h common/hostinfo.h common/record.h \
 daemon/record/resolver.h daemon/record/segment.h daemon/record/synth.h \
 daemon/statedir.h daemon/record/events.h common/walltime.h
daemon/control/control.h:
common/proto.h:
daemon/capture/capture.h:
common/config.h:
common/perf_abi.h:
common/record.h:
common/perf_abi.h:
daemon/control/command.h:
daemon/index/index.h:
daemon/daemon.h:
daemon/record/binaries.h:
common/arena.h:
daemon/record/perflimits.h:
daemon/record/recorder.h:
daemon/record/binaries.h:
daemon/record/buildid_reader.h:
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
daemon/record/events.h:
common/walltime.h:
