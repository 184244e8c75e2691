# perfmapd - continuous profiling collector.  See README.md.
#
#   make            build perfmapd, perfmapctl and the unit tests
#   make deps       install the Debian packages that are missing (idempotent)
#   make run        deps + build + run the daemon in the foreground, state in ./state
#   make check      deps + build + unit and integration tests
#   make check-asan, make check-tsan   the same under the sanitizers
#   make bench      benchmarks against perf record (not part of check)
#   make install    DESTDIR/PREFIX aware install

VERSION    := 0.1.0
PREFIX     ?= /usr/local
SBINDIR    ?= $(PREFIX)/sbin
BINDIR     ?= $(PREFIX)/bin
MANDIR     ?= $(PREFIX)/share/man
SYSCONFDIR ?= /etc
UNITDIR    ?= /lib/systemd/system
SYSUSERSDIR ?= /usr/lib/sysusers.d

CC       ?= cc
PKGS     := libevent libelf libdw sqlite3 libsystemd inih jansson libarchive libdebuginfod liblzma \
	    libzstd libprotobuf-c zlib
CFLAGS   ?= -O2 -g
# -Wno-format-truncation: a truncated error message is fine; paths that must be
# exact are length-checked where they are built.
CFLAGS   += -std=gnu11 -Wall -Wextra -Werror -Wshadow -Wno-unused-parameter -Wno-format-truncation \
	    -Wformat=2 -Wformat-security -fstack-protector-strong \
	    -D_FORTIFY_SOURCE=2 -fPIE -D_GNU_SOURCE -DPERFMAPD_VERSION='"$(VERSION)"' \
	    -Icommon -Icommon/profile -Idaemon -Iclient -MMD -MP \
	    $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
LDFLAGS  += -pie -Wl,-z,relro,-z,now
# The builds that run, check and bench make use every CPU (JOBS=1: one at a time).
JOBS     ?= $(shell nproc 2>/dev/null || echo 1)

# Everything that is built goes to $(BUILD): objects mirror the source tree,
# the programs and the unit tests sit at its top (build/perfmapd,
# build/perfmapctl, build/tests/check_*).  Sanitizer builds get their own
# directory, so switching never needs a clean.
#   make SAN=1   AddressSanitizer + UndefinedBehaviorSanitizer (build-asan/)
#   make SAN=tsan ThreadSanitizer (build-tsan/)
ifeq ($(SAN),1)
BUILD    ?= build-asan
CFLAGS   := $(filter-out -D_FORTIFY_SOURCE=2 -O2,$(CFLAGS)) -O1 -fsanitize=address,undefined \
	    -fno-sanitize-recover=all -fno-omit-frame-pointer
LDFLAGS  += -fsanitize=address,undefined
else ifeq ($(SAN),tsan)
BUILD    ?= build-tsan
CFLAGS   := $(filter-out -D_FORTIFY_SOURCE=2 -O2,$(CFLAGS)) -O1 -fsanitize=thread \
	    -fno-omit-frame-pointer
LDFLAGS  += -fsanitize=thread
endif
BUILD    ?= build
LDLIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null) -lpthread
CHECK_LIBS := $(shell pkg-config --libs check 2>/dev/null)

# Sources, by room: common/ (both programs), daemon/<room>/, client/.
COMMON_SRC := $(sort $(wildcard common/*.c common/*/*.c))
DAEMON_SRC := $(sort $(wildcard daemon/*.c daemon/*/*.c))
CLIENT_SRC := $(sort $(wildcard client/*.c))
TEST_SRC   := $(sort $(wildcard tests/check_*.c))

obj = $(patsubst %.c,$(BUILD)/%.o,$(1))
# pprof's profile.proto (vendored in common/profile/) becomes C in
# $(BUILD)/gen/ through protoc-c; the profile engine's pprof writer uses it.
PB_GEN     := $(BUILD)/gen/profile.pb-c.c $(BUILD)/gen/profile.pb-c.h
COMMON_OBJ := $(call obj,$(COMMON_SRC)) $(BUILD)/gen/profile.pb-c.o
DAEMON_LIB_OBJ := $(call obj,$(filter-out daemon/main.c,$(DAEMON_SRC)))
CLIENT_LIB_OBJ := $(call obj,$(filter-out client/perfmapctl.c,$(CLIENT_SRC)))
TEST_BIN   := $(patsubst %.c,$(BUILD)/%,$(TEST_SRC))
LIBCOMMON  := $(BUILD)/libcommon.a
LIBDAEMON  := $(BUILD)/libdaemon.a
LIBCLIENT  := $(BUILD)/libclient.a

all: $(BUILD)/perfmapd $(BUILD)/perfmapctl $(TEST_BIN)

$(LIBCOMMON): $(COMMON_OBJ)
	$(Q)$(AR) rcs $@ $^
$(LIBDAEMON): $(DAEMON_LIB_OBJ)
	$(Q)$(AR) rcs $@ $^
$(LIBCLIENT): $(CLIENT_LIB_OBJ)
	$(Q)$(AR) rcs $@ $^

$(BUILD)/perfmapd: $(BUILD)/daemon/main.o $(LIBDAEMON) $(LIBCOMMON)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/perfmapctl: $(BUILD)/client/perfmapctl.o $(LIBCLIENT) $(LIBCOMMON)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/tests/check_%: $(BUILD)/tests/check_%.o $(LIBDAEMON) $(LIBCLIENT) $(LIBCOMMON)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(CHECK_LIBS) $(LDLIBS)

# Quiet by default; make V=1 shows the commands.
ifeq ($(V),1)
Q :=
else
Q := @
endif

$(BUILD)/%.o: %.c
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(CFLAGS) -c -o $@ $<

# The Varlink interface definitions go into the daemon as they are
# (daemon/control/interfaces.c includes them with the assembler's .incbin).
$(BUILD)/daemon/control/interfaces.o: daemon/control/io.perfmap.varlink \
	daemon/control/org.varlink.service.varlink
$(BUILD)/daemon/control/interfaces.o: CFLAGS += -Wa,-I$(CURDIR)

$(PB_GEN): common/profile/profile.proto
	@mkdir -p $(@D)
	$(Q)protoc-c --proto_path=common/profile --c_out=$(BUILD)/gen profile.proto
$(BUILD)/gen/profile.pb-c.o: $(BUILD)/gen/profile.pb-c.c
	$(Q)$(CC) $(CFLAGS) -I$(BUILD)/gen -c -o $@ $<
$(BUILD)/common/profile/pprof.o $(BUILD)/tests/check_profile.o: CFLAGS += -I$(BUILD)/gen
$(BUILD)/common/profile/pprof.o $(BUILD)/tests/check_profile.o: $(BUILD)/gen/profile.pb-c.h

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)

deps:
	@tests/deps.sh

# deps first, then a fresh make: pkg-config flags are read when make starts.
run: deps
	$(MAKE) -j$(JOBS) all
	mkdir -p state
	$(BUILD)/perfmapd -f --state-dir ./state --socket ./state/control.sock -c conf/perfmapd.conf

# The test runner takes the build directory from BUILD (tests/lib.sh).
check: deps
	$(MAKE) -j$(JOBS) all
	BUILD=$(BUILD) tests/run-tests.sh

# The whole suite under ASan + UBSan, built in build-asan/.  A unit test's
# timeout (libcheck's, 4 s unless its case says more) is there to catch a
# hang; the sanitizers make code 3-15x slower, so under them it is 4x.
check-asan: deps
	$(MAKE) -j$(JOBS) SAN=1 all
	CK_TIMEOUT_MULTIPLIER=4 ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:exitcode=66 \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 BUILD=build-asan tests/run-tests.sh

# What CI runs under ASan + UBSan: everything but tests whose code the
# others already run under it, or that judge timing or counts a 2-3x
# slower daemon cannot keep, or that test stock perf, not our memory
# (about 10 minutes of the CI's 30 on a slow machine otherwise; the last
# eight of the list took 2 of them off):
#   t_crash          its repair: check_perfdata, t_diskfull
#   t_capture_storm  its captures: t_capture, t_capture_evict, t_hostile_*
#   t_hostile_control  its query thread: t_varlink, t_hostile_queue; its
#                    pings judge timing
#   t_control        control.c: t_varlink and the hostile control tests
#   t_export         export.c: t_hostile_export
#   t_compress       the zstd writer: check_perfdata
#   t_record         every other test records
#   t_hostile_pins, t_sideband_holdoff  storms judged by their counts; the
#                    pins and the hold-off run in every storm
#   t_coexist, t_perftools  stock perf
#   t_index          its rebuild, corruption and reconciliation after a
#                    crash: check_index (test_rebuild_from_segments,
#                    test_corrupt_*, test_reconcile_after_crash); the writer
#                    and the listener: every test that records (55 s here)
#   t_docs           the man pages against the code: no daemon runs
#   t_runner_interrupt  tests/run-tests.sh's ^C: the runner, not the daemon
#   t_hostile_jitexit  the JIT jobs' shares: t_hostile_jit watches and keeps
#                    through the same submit and jobs
#   t_ctl_timeout    perfmapctl's timeouts: its calls run in t_varlink and
#                    every test that drives the daemon
#   t_retention      deletion by keep_*: t_reload (keep_count at a reload),
#                    t_diskfull (room made); the index's forgetting:
#                    check_index
#   t_reload_gone    the reload: t_reload; the config parser: check_config,
#                    t_badinput
#   t_start_backlog  the start-up scan: every test's start; its backlog's
#                    order: check_sideband
#   t_record_cuts, t_rotate_start  the cuts: check_sideband (the real
#                    recorder on real segments) and every test's rotations
#   t_provenance     the sources of a build-id: t_provenance_coarse,
#                    t_provenance_fuse, the hostile tests
#   t_stop_stalled, t_jit_stop  the stops: every test's end, and TSan runs
#                    both; the JIT copies: t_hostile_jit, t_hostile_jittmp,
#                    t_profile_jit
#   t_start_exec     the scan of a process changed at start: make check
#                    (13 s under ASan; its forked child once spun 8 s, less
#                    than a slow machine's scan of its 60k maps took, with
#                    or without ASan: it spins until the test kills it)
#   t_store_stream   the streamed store: check_bidcache (its bounds),
#                    t_capture
#   t_burst_maps     the resolver's bounds: check_buildid_reader
#                    (test_resolver_burst); three bursts of 6,000
#                    mappings are long under ASan
#   t_diskfull       a full disk's paths: check_segment (the close on a
#                    full tmpfs, room made), check_perfdata (test_enospc),
#                    check_sideband (test_start_state_cut_short); 56 s and
#                    109 s of CPU under ASan (2026-12-02)
#   t_profile        the profile code: check_profile; the daemon's
#                    profile calls: t_profile_snapshot, t_profile_jit,
#                    t_profile_upgrade (31 s, 57 s of CPU)
# make check-asan runs them all.
ASAN_CI_SKIP := t_diskfull t_profile t_burst_maps t_start_exec t_store_stream t_crash t_capture_storm t_coexist t_perftools t_hostile_control \
	t_control t_export t_compress t_record t_hostile_pins t_sideband_holdoff t_index \
	t_docs t_runner_interrupt t_hostile_jitexit t_ctl_timeout t_retention t_reload_gone \
	t_start_backlog t_record_cuts t_rotate_start t_provenance t_stop_stalled t_jit_stop
ASAN_CI_TESTS := $(filter-out $(ASAN_CI_SKIP),$(patsubst tests/%.c,%,$(TEST_SRC)) \
	$(patsubst tests/integration/%.sh,%,$(wildcard tests/integration/t_*.sh)))
check-asan-ci:
	TESTS="$(ASAN_CI_TESTS)" $(MAKE) check-asan

# The whole suite under ThreadSanitizer, built in build-tsan/: a data race
# fails the test that provoked it (the daemon exits 66 at the first report).
check-tsan: deps
	$(MAKE) -j$(JOBS) SAN=tsan all
	CK_TIMEOUT_MULTIPLIER=4 TSAN_OPTIONS=halt_on_error=1:exitcode=66:second_deadlock_stack=1 \
	BUILD=build-tsan tests/run-tests.sh

# What CI runs under ThreadSanitizer: the unit tests that start threads
# (TSAN_CI_UNITS: `strace -f -e trace=clone,clone3` on each finds a
# CLONE_THREAD in these only; the others run on one thread, where TSan has
# nothing to find, and ASan runs them all) and the integration
# tests that drive the threads (the index writer, the capture worker, the
# query thread, the build-id readers that close the pins, the worker's
# stop; an export on the worker: t_hostile_export, 5 s, not t_export's
# 29) without a timing bound a 5-15x slower daemon cannot meet (the
# rings of t_control and t_capture_storm overflow under it).  Not t_index: what only it runs (the
# rebuild, the reconciliation after a crash, perfmapctl --state-dir) runs
# before the writer thread starts (index_open) or in a process of one
# thread, and it took 46 s of the CI under TSan.  Not t_hostile_control
# (23 s): the query thread under a flood of users' queries is
# t_hostile_queue's too, and its accept path out of descriptors runs on the
# loop alone.  Not t_hostile_pins (28 s):
# the reader threads that take and close the pins run under TSan in
# check_buildid_reader's resolver tests and in t_hostile_exec's storm.
# About 2.5 minutes; make check-tsan runs everything (about 5.5).
TSAN_CI_UNITS := check_bidcache check_buildid check_buildid_reader check_index check_profile \
	check_sideband
TSAN_CI_TESTS := $(TSAN_CI_UNITS) t_capture t_hostile_export t_store \
	t_retention t_reload t_hostile_cache t_hostile_ns t_hostile_exec \
	t_hostile_queue t_jit_stop t_stop_stalled
check-tsan-ci:
	TESTS="$(TSAN_CI_TESTS)" $(MAKE) check-tsan

bench: deps
	$(MAKE) -j$(JOBS) all $(BUILD)/tests/bench/bench_index $(BUILD)/tests/bench/bench_stretch \
		$(BUILD)/tests/bench/bench_model
	BUILD=$(BUILD) tests/bench/run.sh

$(BUILD)/tests/bench/bench_index: $(BUILD)/tests/bench/bench_index.o $(LIBDAEMON) $(LIBCOMMON)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)
$(BUILD)/tests/bench/bench_stretch: $(BUILD)/tests/bench/bench_stretch.o $(LIBDAEMON) $(LIBCOMMON)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)
$(BUILD)/tests/bench/bench_model: $(BUILD)/tests/bench/bench_model.o $(LIBDAEMON) $(LIBCOMMON)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

UNITS := perfmapd.service perfmapd.socket perfmapd-snapshot.service perfmapd-snapshot.timer

# Units name /usr/sbin and /usr/bin; installed, they name SBINDIR and BINDIR.
install: $(BUILD)/perfmapd $(BUILD)/perfmapctl
	install -d $(DESTDIR)$(SBINDIR) $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man5 \
		$(DESTDIR)$(MANDIR)/man7 $(DESTDIR)$(MANDIR)/man8 $(DESTDIR)$(SYSCONFDIR)/perfmapd \
		$(DESTDIR)$(UNITDIR) $(DESTDIR)$(SYSUSERSDIR)
	install -m 0755 $(BUILD)/perfmapd $(DESTDIR)$(SBINDIR)/perfmapd
	install -m 0755 $(BUILD)/perfmapctl $(DESTDIR)$(BINDIR)/perfmapctl
	install -m 0644 man/perfmapd.8 man/perfmapctl.8 $(DESTDIR)$(MANDIR)/man8/
	install -m 0644 man/perfmapd.conf.5 $(DESTDIR)$(MANDIR)/man5/
	install -m 0644 man/perfmapd.7 $(DESTDIR)$(MANDIR)/man7/
	[ -e $(DESTDIR)$(SYSCONFDIR)/perfmapd/perfmapd.conf ] || \
		install -m 0644 conf/perfmapd.conf $(DESTDIR)$(SYSCONFDIR)/perfmapd/perfmapd.conf
	for u in $(UNITS); do \
		sed -e 's|/usr/sbin/|$(SBINDIR)/|g' -e 's|/usr/bin/perfmapctl|$(BINDIR)/perfmapctl|g' \
			units/$$u > $(DESTDIR)$(UNITDIR)/$$u && chmod 0644 $(DESTDIR)$(UNITDIR)/$$u; \
	done
	install -m 0644 units/perfmapd.sysusers $(DESTDIR)$(SYSUSERSDIR)/perfmapd.conf

# The configuration stays if it was changed since it was installed.
uninstall:
	rm -f $(DESTDIR)$(SBINDIR)/perfmapd $(DESTDIR)$(BINDIR)/perfmapctl \
		$(DESTDIR)$(MANDIR)/man8/perfmapd.8 $(DESTDIR)$(MANDIR)/man8/perfmapctl.8 \
		$(DESTDIR)$(MANDIR)/man5/perfmapd.conf.5 $(DESTDIR)$(MANDIR)/man7/perfmapd.7 \
		$(DESTDIR)$(SYSUSERSDIR)/perfmapd.conf
	for u in $(UNITS); do rm -f $(DESTDIR)$(UNITDIR)/$$u; done
	cmp -s conf/perfmapd.conf $(DESTDIR)$(SYSCONFDIR)/perfmapd/perfmapd.conf && \
		rm -f $(DESTDIR)$(SYSCONFDIR)/perfmapd/perfmapd.conf || true
	-rmdir $(DESTDIR)$(SYSCONFDIR)/perfmapd 2>/dev/null

# Everything built lives in the build directories: the tree is left as cloned.
clean:
	rm -rf build build-asan build-tsan tests/fuzz/fuzz_record tests/fuzz/fuzz_proto \
		tests/fuzz/fuzz_config tests/fuzz/fuzz_buildid

.PHONY: all deps run check check-asan check-asan-ci check-tsan check-tsan-ci bench clean install uninstall
.SECONDARY: $(call obj,$(TEST_SRC))

# make fuzz: each libFuzzer harness for FUZZ_SECONDS (default 60) from its
# committed seed corpus; new finds go to a scratch copy, crashes fail.
FUZZ_SECONDS ?= 60
FUZZ_CFLAGS := -g -O1 -fsanitize=fuzzer,address,undefined -D_GNU_SOURCE -Icommon \
	       $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
FUZZERS := tests/fuzz/fuzz_record tests/fuzz/fuzz_proto tests/fuzz/fuzz_config \
	   tests/fuzz/fuzz_buildid

tests/fuzz/fuzz_record: tests/fuzz/fuzz_record.c common/record.c common/perfdata.c common/perf_abi.c \
	common/compress.c
	clang $(FUZZ_CFLAGS) -o $@ $^ -lzstd
tests/fuzz/fuzz_proto: tests/fuzz/fuzz_proto.c common/proto.c
	clang $(FUZZ_CFLAGS) -o $@ $^ -ljansson
tests/fuzz/fuzz_config: tests/fuzz/fuzz_config.c common/config.c
	clang $(FUZZ_CFLAGS) -o $@ $^ -linih
tests/fuzz/fuzz_buildid: tests/fuzz/fuzz_buildid.c common/buildid.c
	clang $(FUZZ_CFLAGS) -o $@ $^

fuzz: deps
	@tests/deps.sh clang
	$(MAKE) $(FUZZERS)
	@set -e; for f in $(FUZZERS); do \
		n=$${f##*/fuzz_}; work=$$(mktemp -d /tmp/perfmapd-fuzz-$$n.XXXXXX); \
		cp tests/fuzz/corpus/$$n/* $$work/; \
		echo "== $$f ($(FUZZ_SECONDS) s)"; \
		$$f -max_total_time=$(FUZZ_SECONDS) -artifact_prefix=$$work/ $$work 2>&1 | tail -3; \
		rm -rf $$work; \
	done
.PHONY: fuzz

# make soak: SOAK_SECONDS (600) under an exec storm; see tests/soak.sh.
soak: deps
	$(MAKE) -j$(JOBS) all
	tests/soak.sh
.PHONY: soak
