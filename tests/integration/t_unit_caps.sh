#!/bin/sh
# The capabilities units/perfmapd.service grants are enough, and are all
# the daemon has: perfmapd run with exactly that bounding set (setpriv;
# systemd is not needed to apply it) records, copies another user's
# private (0700) binary, deleted while it runs, through /proc/PID/map_files,
# copies kallsyms with
# real addresses, and gives the state directory (setgid) and the socket
# to the control group.  The unit's other lines that reach into the
# daemon's system calls (RestrictSUIDSGID=, applied as systemd does when
# the unit sets it) must leave all of that working.
# test-lane: beside (tests/run-tests.sh: light, judged in seconds)
. tests/lib.sh
. tests/hostile/lib.sh
need_events
need_useradd
command -v jq >/dev/null 2>&1 || skip "jq is not installed"

caps=$(sed -n 's/^CapabilityBoundingSet=//p' units/perfmapd.service | tr 'A-Z ' 'a-z\n' |
	sed -n 's/^cap_/+/p' | paste -sd, -)
[ -n "$caps" ] || fail "no CapabilityBoundingSet= in units/perfmapd.service"
[ "$(cat /proc/sys/kernel/cap_last_cap)" -ge 40 ] ||
	skip "the kernel has no CAP_CHECKPOINT_RESTORE (Linux < 5.9): the unit's notes apply"
note "bounding set: $caps"

new_user A a
new_group G g
chmod 0711 "$T"
mkdir -m 0700 "$T/home" && chown "$A" "$T/home"
# a build-id of its own: another copy of spin on the host (every build has
# the same one) would be copied first, and this one never (one copy per
# build-id), whatever map_files allows
build_prog spin "$(unique_buildid)"
cp "$T/spin" "$T/home/priv" && chown "$A" "$T/home/priv" && chmod 0700 "$T/home/priv"
ID=$(readelf_buildid "$T/home/priv")

# The unit's RestrictSUIDSGID=, if it says yes, as systemd applies it (a
# seccomp filter: tests/progs/sxid.c): the daemon must live with it.
sxid=""
if grep -q '^RestrictSUIDSGID=yes' units/perfmapd.service; then
	build_prog sxid
	sxid=$T/sxid
	note "RestrictSUIDSGID=yes: the daemon runs under its seccomp filter"
fi
# The files the unit makes inaccessible, as systemd does (a mode 0000
# file bound over each, in a mount namespace of the daemon's own): its
# InaccessiblePaths=, and what ProtectKernelTunables=yes hides, kallsyms
# among them (before, the unit said yes: no segment had a kernel map).
hide=$(sed -n 's/^InaccessiblePaths=//p' units/perfmapd.service | tr ' ' '\n' | sed 's/^-//')
grep -q '^ProtectKernelTunables=yes' units/perfmapd.service &&
	hide="$hide /proc/kallsyms /proc/kcore"
: > "$T/inaccessible" && chmod 0000 "$T/inaccessible"
binds=""
for p in $hide; do [ -f "$p" ] && binds="$binds mount --bind '$T/inaccessible' '$p' &&"; done
note "made inaccessible as the unit says:" $hide
cat > "$T/pmd" <<EOF
#!/bin/sh
exec unshare -m --propagation private sh -c "$binds exec $sxid setpriv --bounding-set=-all,$caps --inh-caps=-all -- '$PERFMAPD' \\"\\\$@\\"" sh "\$@"
EOF
chmod 0755 "$T/pmd"
PERFMAPD=$T/pmd
start_daemon "[daemon]
control_group = $G
[record]
frequency = 199
drain_interval = 50ms"
want=$(setpriv --bounding-set=-all,$caps --inh-caps=-all -- grep '^CapEff' /proc/self/status)
have=$(grep '^CapEff' "/proc/$DAEMON_PID/status")
[ "$want" = "$have" ] || fail "daemon runs with $have, not the unit's $want"
note "daemon: $have"

# Deleted while it runs: only the mapped inode (map_files) is left to copy.
# A user's file: its copy is an untrusted one, under .ns/1 (bidcache.h).
as_user "$A" sh -c "'$T/home/priv' 1 & sleep 0.3; rm '$T/home/priv'; wait" >/dev/null
S=$T/state
for _ in $(seq 1 100); do
	[ -f "$S/debug/.ns/1$T/home/priv/$ID/elf" ] && break
	sleep 0.1
done
# Every directory of the state is root's to write in without
# CAP_DAC_OVERRIDE (the unit has none): the control socket's umask, once
# changed around its bind, made a capture thread's .build-id/xx 0640 and
# every capture after it fail (seen once in CI).
bad=$(find "$S" -type d ! -perm -u=rwx | head -3)
[ -z "$bad" ] || fail "directories of the state root cannot write in: $(ls -ld $bad)"
[ -f "$S/debug/.ns/1$T/home/priv/$ID/elf" ] || {
	ls -R "$S/debug" | grep -A3 priv
	"$PERFMAPCTL" -s "$T/control.sock" --json status | jq -c .cache
	fail "the private binary was not copied (map_files) within 10 s of its exit"
}
[ "$(readelf_buildid "$S/debug/.ns/1$T/home/priv/$ID/elf")" = "$ID" ] || fail "the copy is not $ID"
k=$(ls "$S/debug/[kernel.kallsyms]"/*/kallsyms 2>/dev/null | head -1)
[ -n "$k" ] || fail "no kallsyms copy"
grep -qv '^0000000000000000 ' "$k" || fail "kallsyms copied without addresses (CAP_SYSLOG)"
seg=$("$PERFMAPCTL" -s "$T/control.sock" snapshot) || fail "snapshot"
perf script -i "$seg" --show-mmap-events 2>/dev/null | grep -q 'kernel.kallsyms' ||
	fail "the segment has no [kernel.kallsyms] map"
grep -q 'names no _text' "$T/daemon.log" && fail "the daemon says it has no kernel map"
[ "$(stat -c '%a %G' "$S")" = "2750 $G" ] ||
	fail "state directory $(stat -c '%a %G' "$S"), not 2750 $G (CAP_CHOWN, CAP_FSETID)"
[ "$(stat -c '%G' "$T/control.sock")" = "$G" ] || fail "socket not given to $G"
lost=$("$PERFMAPCTL" -s "$T/control.sock" --json status | jq .counters.lost)
stop_daemon
[ "$lost" = 0 ] || fail "$lost records lost"
echo "PASS: the unit's capabilities suffice"
