#!/bin/sh
# Adversarial: `perfmapctl store` and a user's path.  With capture off,
# store copies a binary the cache lacks from the path the segment names,
# which the user controls.  A user runs a file of their own, then puts in
# its place:
# - a symlink to root's private binary, whose build-id the user wrote
#   into their file (build-ids are not secrets): a daemon that follows it
#   copies root's binary into the cache;
# - a FIFO, with a process of theirs waiting to open it for writing: a
#   daemon that opens the path opens the FIFO (the writer goes on).  A
#   device would be opened the same way, and some open with side effects
#   (a watchdog starts at its open).
# Root's store must report both as failures with the reason, copy nothing,
# open nothing, and keep recording.
# A user's copy of a forged file with a system binary's build-id is
# replaced by the real one at root's store of a segment that has it.
# Meanwhile two processes of the user map one file at a 2 KB path 30,000
# times each: store's look for live processes that map a path it wants
# must not hold every mapping of the host (before: 60,000 copies of the
# path, 120 MB more in the root daemon).
. tests/lib.sh
. tests/hostile/lib.sh
hostile_start
need_perf
build_hostile mapexec
build_hostile mkelf

secret_binary
cc -O0 -o "$T/own.c.bin" -x c - $(unique_buildid) <<EOF || fail "cannot build the user's binary"
int main(void) { return $$ % 7; }
EOF
chmod 0755 "$T/own.c.bin"
F=$(readelf_buildid "$T/own.c.bin")

start_daemon "[record]
frequency = 499
drain_interval = 100ms
[cache]
capture = off"
sleep 1.2
as_user "$A" sh -c "'$T/mkelf' forge '$T/spin' '$H/sym' $K && cp '$T/own.c.bin' '$H/fifo'" ||
	fail "the user's files"
sleep 1.2	# older than the read's ctime margin, on a file system of whole seconds too
as_user "$A" "$T/mapexec" 1 "$H/sym" "$H/fifo" || fail "the user's mappings"
sleep 0.5
seg=$("$PERFMAPCTL" -s "$T/control.sock" snapshot) || fail "snapshot"
perf buildid-list -i "$seg" 2> /dev/null | grep -q "^$K $H/sym" ||
	{ perf buildid-list -i "$seg" 2>&1 | tail -5; fail "the segment does not name $H/sym with build-id $K: the attack cannot be judged"; }
perf buildid-list -i "$seg" 2> /dev/null | grep -q "^$F $H/fifo" ||
	fail "the segment does not name $H/fifo with build-id $F: the attack cannot be judged"
as_user "$A" sh -c "ln -sf '$T/secret/bin' '$H/sym' && rm -f '$H/fifo' && mkfifo '$H/fifo'" ||
	fail "the user's replacements"
# The user's writer: its open of the FIFO returns only once someone opens it to read.
setpriv --reuid="$A" --regid="$(id -g "$A")" --init-groups -- \
	sh -c "exec 3> '$H/fifo'; echo opened > '$H/opened'" &
WRITER=$!
BG_PIDS="${BG_PIDS:-} $WRITER"
for i in 1 2; do
	as_user "$A" /usr/bin/python3 -c '
import ctypes, os, sys, time
d = sys.argv[1]
for _ in range(10):
	d = os.path.join(d, "d" * 200)
	os.makedirs(d, exist_ok=True)
p = os.path.join(d, "f")
with open(p, "wb") as f:
	f.write(b"\0" * 4096)
fd = os.open(p, os.O_RDONLY)
libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
for _ in range(30000):	# PROT_READ, MAP_PRIVATE
	if libc.mmap(None, 4096, 1, 2, fd, 0) in (None, ctypes.c_void_p(-1).value):
		sys.exit(1)
open(sys.argv[2], "w").write("ready")
time.sleep(120)' "$H/long$i" "$H/ready$i" 2> "$T/mapper$i.err" &
	BG_PIDS="$BG_PIDS $!"
done
for _ in $(seq 1 100); do [ -s "$H/ready1" ] && [ -s "$H/ready2" ] && break; sleep 0.1; done
[ -s "$H/ready1" ] && [ -s "$H/ready2" ] || { cat "$T"/mapper*.err; fail "the user's mappers did not get ready"; }
hwm0=$(daemon_hwm_kb)
"$PERFMAPCTL" -s "$T/control.sock" store "$seg" > "$T/store.out" 2>&1
hwm1=$(daemon_hwm_kb)
note "store: $(grep -E "$K|$F" "$T/store.out" | tr '\n' ' ')"
note "the daemon's peak RSS across the store: $hwm0 -> $hwm1 kB, beside 60,000 mappings of a 2 KB path"
[ $((hwm1 - hwm0)) -le 32768 ] ||
	fail "the store's look at live processes took $((hwm1 - hwm0)) kB: it holds every mapping users make"
sleep 0.5
[ -e "$H/opened" ] && fail "the daemon opened the user's FIFO $H/fifo"
kill "$WRITER" 2>/dev/null
grep -q "^OK $K" "$T/store.out" && fail "store copied $K through the user's symlink: $(cat "$T/store.out")"
grep -q "^FAIL $K .*symbolic link" "$T/store.out" ||
	fail "store gave no failure with the reason for $K: $(cat "$T/store.out")"
grep -q "^FAIL $F .*not a regular file" "$T/store.out" ||
	fail "store gave no failure with the reason for $F: $(cat "$T/store.out")"
if grep -rl "$MARK" "$T/state" > "$T/found" 2>/dev/null; then
	fail "root's private binary was copied under the state directory: $(head -3 "$T/found")"
fi
"$PERFMAPCTL" -s "$T/control.sock" ping > /dev/null || fail "the daemon does not answer after the store"

# A system binary's build-id in a user's file, stored first (its copy is
# the untrusted kind, DIR/.ns/1), then the system binary runs and root
# stores its segment: the real file must replace the user's.  Before,
# store took "in the cache" as done, and perf showed /usr/bin/yes's
# samples with the user's functions.
YES=$(readelf_buildid /usr/bin/yes)
link="$T/state/debug/.build-id/$(echo "$YES" | cut -c1-2)/$(echo "$YES" | cut -c3-)"
as_user "$A" "$T/mkelf" forge "$T/spin" "$H/yes" "$YES" || fail "mkelf yes"
as_user "$A" "$H/yes" 0.3 > /dev/null
seg=$("$PERFMAPCTL" -s "$T/control.sock" snapshot) || fail "snapshot"
"$PERFMAPCTL" -s "$T/control.sock" store "$seg" > "$T/store1.out" 2>&1
cmp -s "$link/elf" "$H/yes" ||
	fail "the user's forged file is not the cache's $YES: the test proves nothing ($(grep "$YES" "$T/store1.out"))"
yes > /dev/null & y=$!
sleep 0.5
kill "$y"
seg=$("$PERFMAPCTL" -s "$T/control.sock" snapshot) || fail "snapshot"
"$PERFMAPCTL" -s "$T/control.sock" store "$seg" > "$T/store2.out" 2>&1
note "store after root's yes: $(grep "$YES" "$T/store2.out")"
cmp -s "$link/elf" /usr/bin/yes ||
	fail "the cache's $YES is still the user's file after root's store of /usr/bin/yes ($(readlink "$link"))"
stop_daemon
echo "PASS: store follows no user's symlink and opens no FIFO; a user's copy does not stand for a system binary"
