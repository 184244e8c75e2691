# perfmapd - continuous profiling collector.  See README.md.
#
#   make            build perfmapd, perfmapctl and the unit tests
#   make deps       install the Debian packages that are missing (idempotent)
#   make run        deps + build + run the daemon in the foreground, state in ./state
#   make check      deps + build + unit and integration tests
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
PKGS     := libevent libelf sqlite3 libsystemd inih jansson libarchive libdebuginfod liblzma libzstd
CFLAGS   ?= -O2 -g
# -Wno-format-truncation: a truncated error message is fine; paths that must be
# exact are length-checked where they are built.
CFLAGS   += -std=gnu11 -Wall -Wextra -Werror -Wshadow -Wno-unused-parameter -Wno-format-truncation \
	    -Wformat=2 -Wformat-security -fstack-protector-strong \
	    -D_FORTIFY_SOURCE=2 -fPIE -D_GNU_SOURCE -DPERFMAPD_VERSION='"$(VERSION)"' \
	    -Icommon $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
LDFLAGS  += -pie -Wl,-z,relro,-z,now
# make SAN=1: AddressSanitizer + UndefinedBehaviorSanitizer build (check-asan)
ifeq ($(SAN),1)
CFLAGS   := $(filter-out -D_FORTIFY_SOURCE=2 -O2,$(CFLAGS)) -O1 -fsanitize=address,undefined \
	    -fno-sanitize-recover=all -fno-omit-frame-pointer
LDFLAGS  += -fsanitize=address,undefined
endif
LDLIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null) -lpthread
CHECK_LIBS := $(shell pkg-config --libs check 2>/dev/null)

COMMON_SRC := $(sort $(wildcard common/*.c))
DAEMON_SRC := $(sort $(wildcard daemon/*.c))
CLIENT_SRC := $(sort $(wildcard client/*.c))
TEST_SRC   := $(sort $(wildcard tests/check_*.c))

COMMON_OBJ := $(COMMON_SRC:.c=.o)
DAEMON_OBJ := $(DAEMON_SRC:.c=.o)
DAEMON_LIB_OBJ := $(filter-out daemon/main.o,$(DAEMON_OBJ))
CLIENT_OBJ := $(CLIENT_SRC:.c=.o)
CLIENT_LIB_OBJ := $(filter-out client/perfmapctl.o,$(CLIENT_OBJ))
TEST_BIN   := $(TEST_SRC:.c=)

all: perfmapd $(if $(CLIENT_SRC),perfmapctl) $(TEST_BIN)

common/libcommon.a: $(COMMON_OBJ)
	$(AR) rcs $@ $^

daemon/libdaemon.a: $(DAEMON_LIB_OBJ)
	$(AR) rcs $@ $^

perfmapd: daemon/main.o daemon/libdaemon.a common/libcommon.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

client/libclient.a: $(CLIENT_LIB_OBJ)
	$(AR) rcs $@ $^

perfmapctl: client/perfmapctl.o client/libclient.a common/libcommon.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

tests/check_%: tests/check_%.o daemon/libdaemon.a client/libclient.a common/libcommon.a
	$(CC) $(LDFLAGS) -o $@ $^ $(CHECK_LIBS) $(LDLIBS)

%.o: %.c $(wildcard common/*.h daemon/*.h client/*.h)
	$(CC) $(CFLAGS) -Idaemon -Iclient -c -o $@ $<

deps:
	@tests/deps.sh

# deps first, then a fresh make: pkg-config flags are read when make starts.
run: deps
	$(MAKE) all
	mkdir -p state
	./perfmapd -f --state-dir ./state --socket ./state/control.sock -c conf/perfmapd.conf

check: deps
	$(MAKE) all
	tests/run-tests.sh

# The whole suite under ASan + UBSan (objects are rebuilt, then rebuilt plain).
check-asan: deps
	$(MAKE) clean
	$(MAKE) SAN=1 all
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:exitcode=66 \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 tests/run-tests.sh; \
	rc=$$?; $(MAKE) clean; $(MAKE) all; exit $$rc

bench: deps
	$(MAKE) all tests/bench/bench_index
	tests/bench/run.sh

tests/bench/bench_index: tests/bench/bench_index.o daemon/libdaemon.a common/libcommon.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

UNITS := perfmapd.service perfmapd.socket perfmapd-snapshot.service perfmapd-snapshot.timer

# Units name /usr/sbin and /usr/bin; installed, they name SBINDIR and BINDIR.
install: perfmapd perfmapctl
	install -d $(DESTDIR)$(SBINDIR) $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man5 \
		$(DESTDIR)$(MANDIR)/man8 $(DESTDIR)$(SYSCONFDIR)/perfmapd $(DESTDIR)$(UNITDIR) \
		$(DESTDIR)$(SYSUSERSDIR)
	install -m 0755 perfmapd $(DESTDIR)$(SBINDIR)/perfmapd
	install -m 0755 perfmapctl $(DESTDIR)$(BINDIR)/perfmapctl
	install -m 0644 man/perfmapd.8 man/perfmapctl.8 $(DESTDIR)$(MANDIR)/man8/
	install -m 0644 man/perfmapd.conf.5 $(DESTDIR)$(MANDIR)/man5/
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
		$(DESTDIR)$(MANDIR)/man5/perfmapd.conf.5 $(DESTDIR)$(SYSUSERSDIR)/perfmapd.conf
	for u in $(UNITS); do rm -f $(DESTDIR)$(UNITDIR)/$$u; done
	cmp -s conf/perfmapd.conf $(DESTDIR)$(SYSCONFDIR)/perfmapd/perfmapd.conf && \
		rm -f $(DESTDIR)$(SYSCONFDIR)/perfmapd/perfmapd.conf || true
	-rmdir $(DESTDIR)$(SYSCONFDIR)/perfmapd 2>/dev/null

clean:
	rm -f perfmapd perfmapctl $(TEST_BIN) common/*.o daemon/*.o client/*.o tests/*.o \
		common/libcommon.a daemon/libdaemon.a tests/bench/*.o tests/bench/bench_index

.PHONY: all deps run check check-asan bench clean install uninstall
.SECONDARY: $(TEST_SRC:.c=.o)

# make fuzz: each libFuzzer harness for FUZZ_SECONDS (default 60) from its
# committed seed corpus; new finds go to a scratch copy, crashes fail.
FUZZ_SECONDS ?= 60
FUZZ_CFLAGS := -g -O1 -fsanitize=fuzzer,address,undefined -D_GNU_SOURCE -Icommon \
	       $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
FUZZERS := tests/fuzz/fuzz_record tests/fuzz/fuzz_proto tests/fuzz/fuzz_config \
	   tests/fuzz/fuzz_buildid

tests/fuzz/fuzz_record: tests/fuzz/fuzz_record.c common/record.c common/perfdata.c common/perf_abi.c
	clang $(FUZZ_CFLAGS) -o $@ $^
tests/fuzz/fuzz_proto: tests/fuzz/fuzz_proto.c common/proto.c
	clang $(FUZZ_CFLAGS) -o $@ $^ -ljansson
tests/fuzz/fuzz_config: tests/fuzz/fuzz_config.c common/config.c
	clang $(FUZZ_CFLAGS) -o $@ $^ -linih
tests/fuzz/fuzz_buildid: tests/fuzz/fuzz_buildid.c common/buildid.c
	clang $(FUZZ_CFLAGS) -o $@ $^ -lelf -lpthread

fuzz: deps
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
	$(MAKE) all
	tests/soak.sh
.PHONY: soak
