#!/bin/sh
# The cache as a fleet service:
# - elfutils debuginfod -F <cache> serves a binary perfmapd captured, and
#   debuginfod-find executable ID returns a file whose build-id is ID;
#   the same for a kernel module (SKIP where the kernel has none loaded);
# - a second state directory ("another host") that never saw the binary
#   gets it with `store --debuginfod` from that server (plain store says
#   FAIL with its reasons), and perf then symbolizes the segment there.
# test-lane: beside (tests/run-tests.sh: light, judged in seconds)
. tests/lib.sh
need_events
need_perf
command -v debuginfod >/dev/null 2>&1 || skip "debuginfod is not installed"
command -v debuginfod-find >/dev/null 2>&1 || skip "debuginfod-find is not installed"
command -v curl >/dev/null 2>&1 || skip "curl is not installed"

cc -O0 -g -fno-omit-frame-pointer -Wl,--build-id -DVERSION=1 -DKONST=$$ -o "$T/pm-fleet" \
	tests/progs/capver.c || fail "cannot build capver"
ID=$(readelf_buildid "$T/pm-fleet")

# --- host A: capture, store, serve -------------------------------------
start_daemon "[record]
frequency = 499
drain_interval = 50ms"
"$T/pm-fleet" 1
seg=$("$PERFMAPCTL" -s "$T/control.sock" snapshot) ||
	fail "snapshot"
"$PERFMAPCTL" -s "$T/control.sock" store "$seg" > "$T/store-a" || { cat "$T/store-a"; fail "store on A"; }
grep -q "^OK $ID " "$T/store-a" || fail "store on A: no OK for $ID"
rm -f "$T/pm-fleet"
stop_daemon
CACHE=$T/state/debug

PORT=$((20000 + $$ % 20000))
debuginfod -F "$CACHE" -p "$PORT" -d "$T/debuginfod.sqlite" -t 0 -g 0 > "$T/debuginfod.log" 2>&1 &
DPID=$!
BG_PIDS="$DPID"
URL=http://127.0.0.1:$PORT
ok=""
for _ in $(seq 1 120); do
	code=$(curl -s -o /dev/null -w '%{http_code}' "$URL/buildid/$ID/executable" 2>/dev/null)
	[ "$code" = 200 ] && { ok=1; break; }
	kill -0 "$DPID" 2>/dev/null || { cat "$T/debuginfod.log"; fail "debuginfod died"; }
	sleep 0.5
done
[ -n "$ok" ] || { tail -5 "$T/debuginfod.log"; fail "debuginfod never served $ID"; }
got=$(DEBUGINFOD_URLS=$URL DEBUGINFOD_CACHE_PATH=$T/find-cache debuginfod-find executable "$ID") ||
	fail "debuginfod-find executable $ID failed"
[ "$(readelf_buildid "$got")" = "$ID" ] || fail "debuginfod-find returned $got, not build-id $ID"
note "debuginfod-find executable $ID -> $got"

# Modules: only where the kernel has loaded modules with a build-id; there
# the cache must hold one.
loaded=""
for m in $(awk '{ print $1 }' /proc/modules 2>/dev/null); do
	[ -r "/sys/module/$m/notes/.note.gnu.build-id" ] && { loaded=$m; break; }
done
if [ -n "$loaded" ]; then
	mod=$(find "$CACHE" -path '*.ko*/*/elf' 2>/dev/null | head -1)
	[ -n "$mod" ] || fail "module $loaded is loaded with a build-id, but no module is in the cache"
	mid=$(basename "$(dirname "$mod")")
	got=$(DEBUGINFOD_URLS=$URL DEBUGINFOD_CACHE_PATH=$T/find-cache debuginfod-find executable "$mid") ||
		fail "debuginfod-find executable $mid (module) failed"
	[ "$(readelf_buildid "$got")" = "$mid" ] || fail "module $mid: wrong file served"
	note "module $mid served"
else
	echo "SKIP (part): this kernel has no loaded module with a build-id; module serving not tested"
fi

# --- host B: a state dir that never saw pm-fleet -----------------------
B=$T/b
mkdir -p "$B/state/segments"
cp "$seg" "$B/state/segments/"
bseg=$B/state/segments/$(basename "$seg")
printf '[record]\nfrequency = 99\n[cache]\ncapture = off\n' > "$B/perfmapd.conf"
DEBUGINFOD_URLS=$URL DEBUGINFOD_CACHE_PATH=$B/dcache "$PERFMAPD" -f -d -c "$B/perfmapd.conf" \
	--state-dir "$B/state" --socket "$B/control.sock" > "$B/daemon.log" 2>&1 &
BPID=$!
BG_PIDS="$DPID $BPID"
for _ in $(seq 1 100); do grep -q "recording into" "$B/daemon.log" && break; sleep 0.1; done
grep -q "recording into" "$B/daemon.log" || { cat "$B/daemon.log"; fail "daemon B did not start"; }
ctlb() { "$PERFMAPCTL" -s "$B/control.sock" "$@"; }

ctlb store "$(basename "$bseg")" > "$B/store1" && fail "store on B succeeded without the binary"
grep "^FAIL $ID " "$B/store1" || { cat "$B/store1"; fail "store on B: no FAIL line for $ID"; }
grep "^FAIL $ID " "$B/store1" | grep -q 'no live process maps it' ||
	fail "the FAIL line does not give its reasons"
ctlb store --debuginfod "$bseg" > "$B/store2" || { cat "$B/store2"; fail "store --debuginfod on B"; }
grep -q "^OK $ID " "$B/store2" || { cat "$B/store2"; fail "store --debuginfod: $ID not OK"; }
ctlb --json store "$bseg" | grep -q "\"buildid\": \"$ID\"" || fail "store --json on B"
f=$(find "$B/state/debug" -path "*/$ID/elf")
[ -n "$f" ] && [ "$(readelf_buildid "$f")" = "$ID" ] || fail "B's cache has no verified copy of $ID"
perf --buildid-dir "$B/state/debug" report -i "$bseg" --stdio --comm pm-fleet --sort sym 2>/dev/null |
	grep -q pm_capv1_hot || fail "perf on B does not symbolize pm-fleet from B's cache"
kill -TERM "$BPID"; wait "$BPID" || fail "daemon B exited badly"
kill "$DPID"; wait "$DPID" 2>/dev/null
BG_PIDS=""
echo "PASS: debuginfod serves the cache; host B fetched $ID through store --debuginfod"
