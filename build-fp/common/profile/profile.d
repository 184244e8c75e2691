build-fp/common/profile/profile.o: common/profile/profile.c \
 common/buildid.h common/perf_abi.h common/index_reader.h \
 common/walltime.h common/profile/perfout.h common/perfdata.h \
 common/compress.h common/hostinfo.h common/record.h \
 common/profile/procs.h common/profile/symbolize.h common/perf_abi.h \
 common/profile/profile.h common/record.h common/profile/stacks.h
common/buildid.h:
common/perf_abi.h:
common/index_reader.h:
common/walltime.h:
common/profile/perfout.h:
common/perfdata.h:
common/compress.h:
common/hostinfo.h:
common/record.h:
common/profile/procs.h:
common/profile/symbolize.h:
common/perf_abi.h:
common/profile/profile.h:
common/record.h:
common/profile/stacks.h:
