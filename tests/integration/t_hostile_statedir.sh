#!/bin/sh
# Adversarial: the state directory (issue 16, "Poison" and "Read").  A state
# directory a user owns, or may write (0777, 0775 with another group), or
# under a parent a user may write, is refused with a clear message and a
# non-zero exit; so are a planted `lock` symlink (root would truncate its
# target), an `index.db` symlink (SQLite would create files where it
# points), a `segments` or `debug` symlink, and a hard link planted as
# `lock` - and their targets are left untouched.  A good state directory
# is created 2750 with the control group (or 0750), and nothing in it is
# for others: a user outside the group reads nothing, a member reads the
# index offline.
# test-lane: beside (tests/run-tests.sh: light, judged in seconds)
. tests/lib.sh
. tests/hostile/lib.sh
need_events
need_useradd

new_user A a
new_user B b
new_group G g "$B"
CONF='[record]
frequency = 99
[segments]
rotate_age = 2s'
printf '%s\n' "$CONF" > "$T/perfmapd.conf"

# try DIR: the daemon must refuse DIR, exit 1, and name the problem (PATTERN)
refused() {
	timeout 20 "$PERFMAPD" -f -c "$T/perfmapd.conf" --state-dir "$1" \
		--socket "$T/refused.sock" > "$T/refused.log" 2>&1
	rc=$?
	[ $rc -eq 1 ] || { cat "$T/refused.log"; fail "$1: exit $rc, not 1 (refused)"; }
	grep -q "$2" "$T/refused.log" || { cat "$T/refused.log"; fail "$1: no '$2' in the message"; }
	note "refused $1: $(tail -1 "$T/refused.log")"
}

chmod 0711 "$T"		# the users reach their playground; no one writes $T
echo precious > "$T/victim"
chmod 0600 "$T/victim"
mkdir -m 0777 "$T/open"		# the user's playground, for the targets

mkdir "$T/s-user" && chown "$A" "$T/s-user"
refused "$T/s-user" "s-user is not owned by root"
mkdir -m 0777 "$T/s-777"
refused "$T/s-777" "s-777 is writable by its group or others"
mkdir -m 0775 "$T/s-775" && chgrp "$G" "$T/s-775"
refused "$T/s-775" "s-775 is writable by its group or others"
# Another program's directory, given by mistake (state_dir = /var/lib):
# before, it was taken over, made 2750 with the control group, and the
# program's other users and services were shut out of it.
mkdir -m 0755 "$T/shared" && echo theirs > "$T/shared/other.db"
refused "$T/shared" "shared holds files and none of perfmapd's"
[ "$(stat -c %a "$T/shared")" = 755 ] || fail "a refused directory was made $(stat -c %a "$T/shared")"
[ ! -e "$T/shared/lock" ] || fail "a lock was made in a refused directory"
mkdir "$T/parent" && chown "$A" "$T/parent" && mkdir "$T/parent/state"
refused "$T/parent/state" "parent is not owned by root"
# A user-owned symlink on the way is not followed.
as_user "$A" ln -s "$T/s-ok" "$T/open/link"
refused "$T/open/link" "open is writable"

# What a user planted while the directory was open to them, and root fixed
# the mode since: every planted name is refused.
for what in lock index.db index.db-wal segments debug exports; do
	d="$T/s-$what"
	mkdir -m 0777 "$d"
	case $what in
	segments|debug|exports) as_user "$A" ln -s "$T/open" "$d/$what";;
	*) as_user "$A" ln -s "$T/victim" "$d/$what";;
	esac
	chmod 0755 "$d"
	refused "$d" "$what is"
	# refused before anything changed (before: made 0750 first, then refused)
	case $what in
	lock|index.db*) [ "$(stat -c %a "$d")" = 755 ] ||
		fail "$d was made $(stat -c %a "$d") before it was refused";;
	esac
done
# Other programs' directories that hold names of perfmapd's: /var (a lock
# symlink), /run (a lock directory), /usr/lib (a debug directory).
for what in lock-link lock-dir debug-dir; do
	d="$T/o-$what"
	mkdir -m 0755 "$d" && echo theirs > "$d/other"
	case $what in
	lock-link) ln -s ../run/lock "$d/lock";;
	lock-dir) mkdir "$d/lock";;
	debug-dir) mkdir "$d/debug";;
	esac
	refused "$d" "refusing"
	[ "$(stat -c %a "$d")" = 755 ] || fail "$d ($what) was made $(stat -c %a "$d")"
	[ -e "$d/segments" ] && fail "$d ($what) was given a segments directory"
done
mkdir -m 0777 "$T/s-hard"
as_user "$A" sh -c "echo mine > '$T/open/mine' && ln '$T/open/mine' '$T/s-hard/lock'"
chmod 0755 "$T/s-hard"
refused "$T/s-hard" "lock is not owned by root"

[ "$(cat "$T/victim")" = precious ] || fail "the victim of the lock symlink was written"
[ -z "$(ls -A "$T/open" | grep -v '^link$\|^mine$')" ] ||
	fail "something was written through a planted symlink: $(ls -A "$T/open")"
[ "$(cat "$T/open/mine")" = mine ] || fail "the hard-linked lock's file was written"

# A good state directory: created 2750 root:G, nothing for others.
CONF="$CONF
[daemon]
control_group = $G"
start_daemon "$CONF"
S=$T/state
build_prog spin
"$T/spin" 2 >/dev/null
$PERFMAPCTL -s "$T/control.sock" snapshot >/dev/null || fail "snapshot"
sleep 2
[ "$(stat -c '%a %U %G' "$S")" = "2750 root $G" ] ||
	fail "state directory is $(stat -c '%a %U %G' "$S"), not 2750 root $G"
ls "$S/debug/[kernel.kallsyms]"/*/kallsyms >/dev/null 2>&1 || fail "no kallsyms copy in the cache"
# Nothing reaches others (the directory is 2750); the cache keeps its own
# policy inside it (a world-readable binary's copy is 0644), but the index,
# the segments, the lock, the exports and the kernel's symbols are never
# for others, and everything is the group's.
world=$(find "$S" ! -type l \( \( ! -path "$S/debug/*" -perm /o=rwx \) -o ! -group "$G" \) |
	head -5)
[ -z "$world" ] || fail "under the state directory, for others or not of group $G: $world"
find "$S/debug/[kernel.kallsyms]" -type f -perm /go=rwx | grep -q . &&
	fail "a kallsyms copy is readable by others than root"
note "$(stat -c '%A %G %n' "$S/index.db" "$S"/segments/*.data "$S/debug/[kernel.kallsyms]"/*/kallsyms | head -3)"
as_user "$A" cat "$S/index.db" >/dev/null 2>&1 && fail "a user outside $G reads index.db"
as_user "$A" "$PERFMAPCTL" --state-dir "$S" history "$T/spin" >/dev/null 2>&1 &&
	fail "a user outside $G queries the index offline"
as_user "$B" "$PERFMAPCTL" --state-dir "$S" history "$T/spin" > "$T/b.out" 2>&1 ||
	{ cat "$T/b.out"; fail "a member of $G cannot query the index offline"; }
# ... and exports: the daemon's file in STATE/exports is the group's to read.
as_user "$B" "$PERFMAPCTL" -s "$T/control.sock" export --since -1h -o "$T/open/b.tar" \
	> "$T/b.out" 2>&1 || { cat "$T/b.out"; fail "a member of $G cannot export"; }
tar tf "$T/open/b.tar" | grep -q '^perf-.*\.data$' || fail "the export has no segment"
stop_daemon

# An existing root-owned 0755 directory (an older perfmapd's) is taken over;
# a control_group that names no group (a typo) is root's group, and said.
rm -rf "$S" && mkdir -m 0755 "$S"
getent group pmnogroup >/dev/null && fail "a group pmnogroup exists: the test cannot judge"
start_daemon "[record]
frequency = 99
[daemon]
control_group = pmnogroup"
[ "$(stat -c '%a' "$S")" = 750 ] || fail "0755 state directory not taken over: $(stat -c '%a' "$S")"
grep -q "mode 0750, group 0 (was 0755" "$T/daemon.log" || fail "the take-over is not logged"
grep -q "control_group pmnogroup: no such group" "$T/daemon.log" ||
	fail "a control_group that names no group is not said"
# A profile made now creates STATE/profiles root's, without a group ...
"$T/spin" 0.5
"$PERFMAPCTL" -s "$T/control.sock" snapshot > /dev/null || fail "snapshot"
"$PERFMAPCTL" -s "$T/control.sock" profile --since -1m -o "$T/r.folded" > /dev/null ||
	fail "root's profile"
[ -d "$S/profiles" ] || fail "no $S/profiles after a profile"
stop_daemon
# ... and a control group given later takes it over with the rest: its
# members' profiles are written there.  Before, it stayed root's 0750.
start_daemon "$CONF"
[ "$(stat -c '%G' "$S/profiles")" = "$G" ] ||
	fail "$S/profiles is not taken over by $G: $(stat -c '%a %U %G' "$S/profiles")"
"$T/spin" 0.5
"$PERFMAPCTL" -s "$T/control.sock" snapshot > /dev/null || fail "snapshot"
as_user "$B" "$PERFMAPCTL" -s "$T/control.sock" profile --since -1m -o "$T/open/b.folded" \
	> "$T/b.out" 2>&1 || { cat "$T/b.out"; fail "a member of $G cannot make a profile"; }
stop_daemon
echo "PASS: state directory checks"
