#!/bin/sh
# Runs as a service: the unit files verify, sd_notify messages arrive in
# order on a NOTIFY_SOCKET we listen on (READY, STATUS, WATCHDOG, RELOADING,
# STOPPING), the unit's ExecReload fails on a refused file (systemctl
# reload says so), socket activation hands the control socket over, and the
# installed tree (make install DESTDIR=...) works with its installed
# configuration, and make uninstall removes it.
# test-lane: beside (tests/run-tests.sh: light, judged in seconds)
. tests/lib.sh
need_events
command -v systemd-analyze >/dev/null || skip "systemd-analyze is not installed"

# --- units verify, installed with paths that exist ----------------------------
make -s install PREFIX="$T/prefix/usr" SYSCONFDIR="$T/prefix/etc" \
	UNITDIR="$T/prefix/units" SYSUSERSDIR="$T/prefix/sysusers" > "$T/install.log" 2>&1 ||
	{ cat "$T/install.log"; fail "make install into a prefix"; }
systemd-analyze verify --man=no "$T"/prefix/units/* > "$T/verify" 2>&1 ||
	{ cat "$T/verify"; fail "systemd-analyze verify"; }
note "units verify: $(ls "$T"/prefix/units | tr '\n' ' ')"
# A start that always fails must end in a failed unit, not a loop: with
# Restart=on-failure, StartLimitBurst starts must fit in
# StartLimitIntervalSec (systemd's defaults, 5 in 10 s, never trip at
# RestartSec=5s: a refused state directory was repaired and /proc scanned
# every 5 s for ever).
u=units/perfmapd.service
rsec=$(sed -n 's/^RestartSec=\([0-9]*\)s\{0,1\}$/\1/p' "$u")
ival=$(sed -n 's/^StartLimitIntervalSec=\([0-9]*\)$/\1/p' "$u")
burst=$(sed -n 's/^StartLimitBurst=\([0-9]*\)$/\1/p' "$u")
[ -n "$rsec" ] || fail "the unit's RestartSec= is not in seconds"
[ $((${burst:-5} * rsec)) -lt "${ival:-10}" ] ||
	fail "${burst:-5} restarts every ${rsec} s never fit in StartLimitIntervalSec=${ival:-10}: a failing start loops for ever"

# --- sd_notify, in order --------------------------------------------------------
cc -O1 -o "$T/notify-listen" tests/progs/notify-listen.c || fail "cannot build notify-listen"
"$T/notify-listen" "$T/notify.sock" 30 > "$T/notify.log" &
BG_PIDS="$!"
sleep 0.3
printf '[record]\n' > "$T/perfmapd.conf"
NOTIFY_SOCKET=$T/notify.sock WATCHDOG_USEC=1000000 "$PERFMAPD" -f -c "$T/perfmapd.conf" \
	--state-dir "$T/state" --socket "$T/control.sock" > "$T/daemon.log" 2>&1 &
DAEMON_PID=$!
for _ in $(seq 1 100); do grep -q '^READY=1' "$T/notify.log" && break; sleep 0.1; done
grep -q '^READY=1' "$T/notify.log" || { cat "$T/daemon.log"; fail "no READY=1"; }
"$PERFMAPCTL" -s "$T/control.sock" ping > /dev/null || fail "READY=1 before the socket answers"
sleep 1.5
# systemctl reload: the unit's ExecReload (as installed, the socket from
# PERFMAPD_SOCKET) waits for the verdict, so a refused file fails it
reload=$(sed -n "s/^ExecReload=//p" "$T/prefix/units/perfmapd.service" | sed "s/\\\$MAINPID/$DAEMON_PID/")
[ -n "$reload" ] || fail "the unit has no ExecReload"
printf '[record]\nfrequency = banana\n' > "$T/perfmapd.conf"
PERFMAPD_SOCKET=$T/control.sock $reload > "$T/reload.bad" 2>&1 &&
	fail "ExecReload ($reload) succeeded with a refused file: systemctl reload would say it worked"
grep -q 'frequency' "$T/reload.bad" || { cat "$T/reload.bad"; fail "the refused reload does not say why"; }
printf '[record]\n' > "$T/perfmapd.conf"
PERFMAPD_SOCKET=$T/control.sock $reload > "$T/reload.good" 2>&1 ||
	{ cat "$T/reload.good"; fail "ExecReload ($reload) failed with a good file"; }
note "ExecReload=$reload: a refused file fails it ($(head -1 "$T/reload.bad"))"
# perfmapctl finds a moved socket in the daemon's configuration (-c; by
# default /etc/perfmapd/perfmapd.conf, which ExecReload and the timer use)
printf '[daemon]\nsocket = %s\n' "$T/control.sock" > "$T/moved.conf"
env -u PERFMAPD_SOCKET "$PERFMAPCTL" -c "$T/moved.conf" ping > /dev/null ||
	fail "perfmapctl -c did not find the socket the configuration names"
printf '[daemon]\nsocket = relative\n' > "$T/badsock.conf"
env -u PERFMAPD_SOCKET "$PERFMAPCTL" -c "$T/badsock.conf" ping > "$T/badsock.out" 2>&1
[ $? = 2 ] || { cat "$T/badsock.out"; fail "perfmapctl -c with a refused configuration did not exit 2"; }
"$PERFMAPCTL" -s "$T/control.sock" -c "$T/moved.conf" ping > /dev/null 2>&1
[ $? = 2 ] || fail "perfmapctl took both -s and -c (not a usage error)"
sleep 0.5
kill -TERM "$DAEMON_PID"; wait "$DAEMON_PID"; DAEMON_PID=""
sleep 0.3
kill $BG_PIDS 2>/dev/null; BG_PIDS=""
sed 's/^/   notify: /' "$T/notify.log" | head -20
seq=$(sed -e 's/^\(READY=1\|RELOADING=1\|STOPPING=1\|WATCHDOG=1\|STATUS=\).*/\1/' "$T/notify.log" |
	uniq | tr '\n' ' ')
note "sequence: $seq"
echo "$seq" | grep -q '^READY=1 STATUS= .*WATCHDOG=1.*RELOADING=1 READY=1 .*STOPPING=1 $' ||
	fail "unexpected notify sequence: $seq"
[ "$(grep -c '^WATCHDOG=1' "$T/notify.log")" -ge 2 ] || fail "fewer than 2 WATCHDOG=1 in 2 s"
grep -q '^STATUS=recording.*samples' "$T/notify.log" || fail "STATUS has no counters"

# --- socket activation (systemd-socket-activate comes with systemd) ----------------
command -v systemd-socket-activate >/dev/null || fail "systemd-socket-activate is missing (tests/deps.sh installs systemd)"
rm -rf "$T/state"
systemd-socket-activate -l "$T/act.sock" "$PERFMAPD" -f -c "$T/perfmapd.conf" \
	--state-dir "$T/state" --socket "$T/unused.sock" > "$T/act.log" 2>&1 &
DAEMON_PID=$!
sleep 0.5
"$PERFMAPCTL" -s "$T/act.sock" status > "$T/act.status" || { cat "$T/act.log"; fail "no answer on the activated socket"; }
grep -q 'samples' "$T/act.status" || fail "activated status: $(cat "$T/act.status")"
grep -q 'control socket from systemd' "$T/act.log" || fail "daemon did not take the passed socket"
[ -e "$T/unused.sock" ] && fail "daemon listened on its own socket despite activation"
"$PERFMAPCTL" -s "$T/act.sock" stop > /dev/null || fail "stop over the activated socket"
wait "$DAEMON_PID"; DAEMON_PID=""
note "socket activation: $(head -1 "$T/act.status") ..."

# --- make install DESTDIR=..., run the installed tree, uninstall --------------------
D=$T/root
make -s install DESTDIR="$D" PREFIX=/usr > "$T/install2.log" 2>&1 || { cat "$T/install2.log"; fail "make install DESTDIR"; }
for f in usr/sbin/perfmapd usr/bin/perfmapctl etc/perfmapd/perfmapd.conf \
    usr/share/man/man8/perfmapd.8 usr/share/man/man8/perfmapctl.8 \
    usr/share/man/man5/perfmapd.conf.5 usr/share/man/man7/perfmapd.7 lib/systemd/system/perfmapd.service \
    lib/systemd/system/perfmapd.socket lib/systemd/system/perfmapd-snapshot.timer \
    usr/lib/sysusers.d/perfmapd.conf; do
	[ -f "$D/$f" ] || fail "make install did not install $f"
done
grep -q 'ExecStart=/usr/sbin/perfmapd' "$D/lib/systemd/system/perfmapd.service" || fail "unit path"
"$D/usr/sbin/perfmapd" -n -c "$D/etc/perfmapd/perfmapd.conf" 2>/dev/null || fail "installed config refused"
"$D/usr/sbin/perfmapd" -f -c "$D/etc/perfmapd/perfmapd.conf" --state-dir "$T/istate" \
	--socket "$T/i.sock" > "$T/i.log" 2>&1 &
DAEMON_PID=$!
for _ in $(seq 1 50); do [ -S "$T/i.sock" ] && break; sleep 0.1; done
"$D/usr/bin/perfmapctl" -s "$T/i.sock" status > /dev/null || { cat "$T/i.log"; fail "installed perfmapctl/perfmapd"; }
seg=$("$D/usr/bin/perfmapctl" -s "$T/i.sock" snapshot) || fail "installed snapshot"
perf report -i "$seg" --stdio > /dev/null 2>&1 || fail "perf cannot read the installed daemon's segment"
"$D/usr/bin/perfmapctl" -s "$T/i.sock" stop > /dev/null
wait "$DAEMON_PID"; DAEMON_PID=""
for m in man8/perfmapd.8 man8/perfmapctl.8 man5/perfmapd.conf.5; do
	out=$(mandoc -T lint -W warning "$D/usr/share/man/$m" 2>&1) && [ -z "$out" ] ||
		fail "installed $m does not render cleanly: $out"
done
make -s uninstall DESTDIR="$D" PREFIX=/usr > /dev/null 2>&1 || fail "make uninstall"
left=$(find "$D" -type f | sed "s|^$D||")
[ -z "$left" ] || fail "make uninstall left: $left"
echo "PASS"
