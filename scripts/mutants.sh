#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Mutation testing ("make check-mutants"): how many deliberate faults the VM
# suite catches.
#
#   scripts/mutants.sh [--build-only] [--no-baseline] [--list] [NAME...]
#   scripts/mutants.sh --check-apply [NAME...]
#
# For each mutant of tests/mutants.txt (or each NAME): copy
# drivers/gpu/drm/nfence to $BUILD/mutants/_src, apply the mutant there,
# build nfence.ko for 6.12 from that copy into $BUILD/kmod-mutant-KVER, and
# run scripts/check-vm.sh KVER with it (NFENCE_KO). A mutant is killed when
# it does not build (a defect of the list: every mutant must build) or the
# VM run reports any failure, and survives when the run passes. The run is
# stopped at its first failure: a result line "fail: ...", "vm-check:
# fail: ..." or "not ok ..." in the guest's log, or a splat on the kernel
# console (scripts/lib.sh's pattern) once the tests started; a run that
# takes more than MUTANT_TIMEOUT seconds (default 1200) is stopped too.
# One line per mutant:
#   mutant NAME: killed by <first failing line> | survived | did not build
# then
#   N mutants, K killed (P%)
#   survivors: NAME... (or none)
# Per-mutant files (the diff, the build log, check-vm's output, the guest
# log and console) are kept in $BUILD/mutants/NAME/, the summary in
# $BUILD/mutants/summary.txt. The runs use $BUILD/vm-KVER.log and
# .console.log as check-vm.sh always does; the ones there before are put
# back at the end.
#
# First the unmutated driver runs through the same steps (the baseline): if
# it does not pass, nothing can be measured and the script stops (exit 1).
# --no-baseline skips it.
#
# --build-only applies and builds every mutant without booting anything
# ("mutant NAME: builds", "builds with N warnings", "did not build"), and
# names the driver files no mutant touches; exits 1 if a mutant does not
# build cleanly. --list prints the mutants.
#
# --check-apply only checks that every mutant (or each NAME) applies to
# the driver as it is: its file exists and each hunk's original text occurs
# exactly once in it at the time the hunk is applied, the hunks in order
# (the text of the earlier hunks replaced). Nothing is built, copied or
# written, and no kernel is needed: "make lint" runs it. It prints one line
# per mutant that does not apply ("mutant NAME: does not apply to FILE:
# hunk N: its original text occurs C times in FILE, not once"), then
# "N mutants: K apply, F do not apply", and exits 1 when F is not 0.
#
# The kill rate is a measurement, not a verdict: the script exits 0 however
# many mutants survive. It exits 2 when it cannot measure: a mutant that
# does not apply (its original text must match exactly once), an unknown
# NAME, or a VM run that never started its tests (an infrastructure error).
#
# MUTANTS_KVER overrides the kernel (default: the installed 6.12, from
# scripts/kernels.sh); MUTANTS_LIST the list.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/lib.sh
. "$top/scripts/lib.sh"
BUILD=${BUILD:-$top/build}
export BUILD
LIST=${MUTANTS_LIST:-$top/tests/mutants.txt}
MUTANT_TIMEOUT=${MUTANT_TIMEOUT:-1200}
# Mutants are built and run plainly, whatever the caller's environment.
unset NFENCE_HARNESS_SELFTEST NFENCE_KO

build_only=0 baseline=1 list=0 check_apply=0
names=()
while [ $# -gt 0 ]; do
	case $1 in
	--build-only) build_only=1 ;;
	--no-baseline) baseline=0 ;;
	--list) list=1 ;;
	--check-apply) check_apply=1 ;;
	-h | --help)
		sed -n '4,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
		exit 0
		;;
	-*)
		echo "mutants: unknown option $1" >&2
		exit 2
		;;
	*) names+=("$1") ;;
	esac
	shift
done

# The list's parser and the mutator. Commands:
#   names LIST                  every mutant name, one a line
#   show LIST NAME              "FILE<TAB>BUG<TAB>EXPECT"
#   check LIST SRC NAME...      each applies to SRC (exactly one match per hunk)
#   check-all LIST SRC NAME...  the same for all, naming each that does not
#                               apply (exit 1), then a count
#   apply LIST SRC NAME         apply it in SRC, print the diff
#   files LIST                  the files the mutants touch
py=$(
	cat <<'EOF'
import difflib, os, re, sys

def die(msg):
    sys.stderr.write('mutants: ' + msg + '\n')
    sys.exit(2)

def parse(path):
    mutants, cur, state, buf, orig = [], None, 'top', [], None
    with open(path, encoding='utf-8') as f:
        lines = f.read().split('\n')
    if lines and lines[-1] == '':
        lines.pop()
    for n, line in enumerate(lines, 1):
        where = '%s:%d' % (path, n)
        if state == 'top':
            if line == '<<<':
                if cur is None:
                    die(where + ': hunk before any "mutant:" line')
                state, buf = 'orig', []
            elif line.strip() == '' or line.startswith('#'):
                continue
            else:
                m = re.match(r'^(mutant|file|bug|expect): (\S.*)$', line)
                if not m:
                    die(where + ': expected "mutant:", "file:", "bug:", '
                        '"expect:" or "<<<"')
                key, val = m.groups()
                if key == 'mutant':
                    if not re.match(r'^[a-z0-9][a-z0-9-]*$', val):
                        die(where + ': bad mutant name ' + repr(val))
                    if any(x['name'] == val for x in mutants):
                        die(where + ': mutant ' + val + ' defined twice')
                    cur = {'name': val, 'where': where, 'hunks': []}
                    mutants.append(cur)
                elif cur is None or key in cur:
                    die(where + ': "' + key + ':" out of place')
                else:
                    cur[key] = val
        elif state == 'orig':
            if line == '===':
                orig, buf, state = '\n'.join(buf), [], 'repl'
            elif line in ('<<<', '>>>'):
                die(where + ': "===" expected before ' + line)
            else:
                buf.append(line)
        else:
            if line == '>>>':
                if not orig:
                    die(where + ': empty original text')
                if orig == '\n'.join(buf):
                    die(where + ': replacement equals the original')
                cur['hunks'].append((orig, '\n'.join(buf)))
                state = 'top'
            elif line in ('<<<', '==='):
                die(where + ': ">>>" expected before ' + line)
            else:
                buf.append(line)
    if state != 'top':
        die(path + ': unterminated hunk at the end')
    for m in mutants:
        for key in ('file', 'bug', 'expect'):
            if key not in m:
                die(m['where'] + ': mutant ' + m['name'] + ' has no "' +
                    key + ':"')
        if not m['hunks']:
            die(m['where'] + ': mutant ' + m['name'] + ' has no hunk')
        if '/' in m['file'] or not m['file'].endswith('.c'):
            die(m['where'] + ': file must be a .c file of the driver')
    return mutants

def find(mutants, name):
    for m in mutants:
        if m['name'] == name:
            return m
    die('no mutant ' + name + ' in the list')

def try_mutate(src, m):
    """(path, before, after, None), or (path, None, None, why) when the
    mutant does not apply: its file is missing or a hunk's original text
    does not occur exactly once at the time the hunk is applied."""
    path = os.path.join(src, m['file'])
    if not os.path.isfile(path):
        return path, None, None, 'no file %s' % path
    with open(path, encoding='utf-8') as f:
        before = f.read()
    text = before
    for i, (orig, repl) in enumerate(m['hunks'], 1):
        count = text.count(orig)
        if count != 1:
            return path, None, None, (
                'hunk %d: its original text occurs %d times in %s, not '
                'once:\n%s' % (i, count, m['file'], orig))
        text = text.replace(orig, repl)
    return path, before, text, None

def mutate(src, m):
    path, before, text, why = try_mutate(src, m)
    if why:
        die('mutant %s: %s' % (m['name'], why))
    return path, before, text

cmd, mutants = sys.argv[1], parse(sys.argv[2])
if cmd == 'names':
    for m in mutants:
        print(m['name'])
elif cmd == 'show':
    m = find(mutants, sys.argv[3])
    print('%s\t%s\t%s' % (m['file'], m['bug'], m['expect']))
elif cmd == 'files':
    for f in sorted({m['file'] for m in mutants}):
        print(f)
elif cmd == 'check':
    for name in sys.argv[4:]:
        mutate(sys.argv[3], find(mutants, name))
elif cmd == 'check-all':
    bad = 0
    names = sys.argv[4:]
    for name in names:
        m = find(mutants, name)
        why = try_mutate(sys.argv[3], m)[3]
        if why:
            bad += 1
            first = why.split('\n')[0].rstrip(':')
            print('mutant %s: does not apply to %s: %s' %
                  (name, m['file'], first))
    print('%d mutants: %d apply, %d do not apply' %
          (len(names), len(names) - bad, bad))
    sys.exit(1 if bad else 0)
elif cmd == 'apply':
    m = find(mutants, sys.argv[4])
    path, before, after = mutate(sys.argv[3], m)
    with open(path, 'w', encoding='utf-8') as f:
        f.write(after)
    sys.stdout.writelines(difflib.unified_diff(
        before.splitlines(True), after.splitlines(True),
        'a/' + m['file'], 'b/' + m['file']))
else:
    die('unknown command ' + cmd)
EOF
)
mutants_py() {
	python3 -c "$py" "$@"
}

# A list that does not parse stops everything here (exit 2).
all_names=$(mutants_py names "$LIST")
mapfile -t all <<<"$all_names"
if [ "${#names[@]}" -eq 0 ]; then
	names=("${all[@]}")
fi
for name in "${names[@]}"; do
	case " ${all[*]} " in
	*" $name "*) ;;
	*)
		echo "mutants: no mutant $name in $LIST (--list lists them)" >&2
		exit 2
		;;
	esac
done
if [ "$list" -eq 1 ]; then
	for name in "${names[@]}"; do
		IFS=$'\t' read -r file bug _ < <(mutants_py show "$LIST" "$name")
		printf '%-36s %-18s %s\n' "$name" "$file" "$bug"
	done
	exit 0
fi
if [ "$check_apply" -eq 1 ]; then
	# Reads the driver's files, writes nothing.
	mutants_py check-all "$LIST" "$top/drivers/gpu/drm/nfence" "${names[@]}"
	exit
fi

kver=${MUTANTS_KVER:-$("$top/scripts/kernels.sh" | tr ' ' '\n' | grep '^6\.12\.' || true)}
if [ -z "$kver" ] || [ ! -d "/lib/modules/$kver/build" ]; then
	echo "mutants: no 6.12 kernel with headers installed (make deps, or set MUTANTS_KVER)" >&2
	exit 2
fi

drv=$top/drivers/gpu/drm/nfence
out=$BUILD/mutants
src=$out/_src
kmod=$BUILD/kmod-mutant-$kver
log=$BUILD/vm-$kver.log
console=$BUILD/vm-$kver.console.log
mkdir -p "$out"

# Every selected mutant must apply before anything is built or booted.
rm -rf "$src"
mkdir -p "$src"
rsync -a --exclude=tests "$drv/" "$src/"
mutants_py check "$LIST" "$src" "${names[@]}"

# build_driver DIR [NAME]: a fresh copy of the driver, NAME applied to it
# (its diff in DIR/mutant.diff), built from scratch into $kmod; the build's
# output in DIR/build.log.
build_driver() {
	local dir=$1 name=${2:-}
	rm -rf "$src" "$kmod"
	mkdir -p "$src" "$dir"
	# Not "did not build": the script broke (set -e is off in "if !").
	rsync -a --exclude=tests "$drv/" "$src/" || exit 2
	if [ -n "$name" ]; then
		mutants_py apply "$LIST" "$src" "$name" >"$dir/mutant.diff" ||
			exit 2
	fi
	# Our own make, not a sub-make of "make check-mutants".
	env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS \
		make -C "$top" -s -j"$(nproc)" module KVER="$kver" \
		DRV_SRC="$src" KMOD_DIR="$kmod" >"$dir/build.log" 2>&1
}

warnings() { # DIR: compiler warnings in its build log
	grep -c 'warning:' "$1/build.log" || true
}

if [ "$build_only" -eq 1 ]; then
	ok=0 warned=0 broken=0
	if ! build_driver "$out/_baseline"; then
		echo "mutants: the unmutated driver does not build: $out/_baseline/build.log" >&2
		exit 2
	fi
	for name in "${names[@]}"; do
		dir=$out/$name
		if ! build_driver "$dir" "$name"; then
			echo "mutant $name: did not build ($dir/build.log)"
			grep -m3 'error:' "$dir/build.log" | sed 's/^/    /' || true
			broken=$((broken + 1))
			continue
		fi
		w=$(warnings "$dir")
		if [ "$w" -ne 0 ]; then
			echo "mutant $name: builds with $w warnings ($dir/build.log)"
			grep -m3 'warning:' "$dir/build.log" | sed 's/^/    /'
			warned=$((warned + 1))
		else
			echo "mutant $name: builds"
			ok=$((ok + 1))
		fi
	done
	# The files of the module (nfence-y in the driver's Makefile).
	mapfile -t objs < <(sed -n '/^nfence-y :=/,/^$/p' "$drv/Makefile" |
		grep -o 'nfence_[a-z0-9_]*\.o' | sed 's/\.o$/.c/')
	mapfile -t covered < <(mutants_py files "$LIST")
	missing=()
	for f in "${objs[@]}"; do
		case " ${covered[*]} " in
		*" $f "*) ;;
		*) missing+=("$f") ;;
		esac
	done
	echo "${#names[@]} mutants: $ok build cleanly, $warned with warnings, $broken did not build"
	if [ "${#missing[@]}" -ne 0 ]; then
		echo "files of the module without a mutant: ${missing[*]}"
	else
		echo "every file of the module has a mutant (${#objs[@]} files)"
	fi
	[ "$warned" -eq 0 ] && [ "$broken" -eq 0 ]
	exit
fi

# The VM runs write where check-vm.sh always writes; keep what was there.
saved=()
for f in "$log" "$console"; do
	if [ -e "$f" ]; then
		cp -p "$f" "$out/saved-$(basename "$f")"
		saved+=("$f")
	fi
done
vm_pid=''
verdict=''

# The processes of a run: its check-vm.sh and everything under it (timeout
# moves itself and vng into a process group of their own, so the run's
# group alone would miss qemu).
descendants() {
	local child
	for child in $(pgrep -P "$1" || true); do
		echo "$child"
		descendants "$child"
	done
}
alive() { # PID: running (not a zombie)
	local state
	state=$(ps -o stat= -p "$1" 2>/dev/null) || return 1
	[ -n "$state" ] && [ "${state:0:1}" != Z ]
}

# stop_run PID: end a check-vm.sh run and every process under it, qemu
# included; fails if one of them is still there.
stop_run() {
	local pid=$1 pids p i left=() qemu=()
	mapfile -t pids < <(echo "$pid"; descendants "$pid")
	for p in "${pids[@]}"; do
		case $(ps -o comm= -p "$p" 2>/dev/null) in
		qemu*) qemu+=("$p") ;;
		esac
	done
	kill -TERM "${pids[@]}" 2>/dev/null || true
	for i in $(seq 1 20); do
		left=()
		for p in "${pids[@]}"; do
			if alive "$p"; then left+=("$p"); fi
		done
		[ "${#left[@]}" -eq 0 ] && break
		if [ "$i" -eq 10 ]; then
			kill -KILL "${left[@]}" 2>/dev/null || true
		fi
		sleep 0.5
	done
	wait "$pid" 2>/dev/null || true
	for p in "${qemu[@]}"; do
		if alive "$p"; then
			echo "mutants: qemu (pid $p) still running after the run was stopped" >&2
			return 1
		fi
	done
	if [ "${#left[@]}" -ne 0 ]; then
		echo "mutants: could not stop pids ${left[*]}" >&2
		return 1
	fi
}

# shellcheck disable=SC2317 # run by the EXIT trap
cleanup() {
	local f
	if [ -n "$vm_pid" ]; then
		stop_run "$vm_pid" || true
		vm_pid=
	fi
	for f in "${saved[@]}"; do
		cp -p "$out/saved-$(basename "$f")" "$f"
	done
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The first failure of a run so far, or nothing.
first_failure() {
	local line
	if [ -e "$log" ]; then
		line=$(grep -m1 -E '^(fail: |vm-check: fail|not ok )' "$log" |
			tr -d '\r') || true
		if [ -n "$line" ]; then
			echo "$line"
			return
		fi
	fi
	if [ -e "$console" ]; then
		line=$(nfence_strip_fault_reports <"$console" |
			sed -n '/nfence-vm-run: start/,$p' |
			grep -m1 -E "$NFENCE_SPLAT_RE" | tr -d '\r') || true
		if [ -n "$line" ]; then
			echo "kernel: $line"
		fi
	fi
}

# run_vm DIR: one VM run of the module in $kmod; sets verdict to "killed by
# ...", "survived" or "error: ...". The logs are kept in DIR. (Not run in a
# subshell: the EXIT trap must know vm_pid to stop the run.)
run_vm() {
	local dir=$1 start=$SECONDS rc=0 why=
	rm -f "$log" "$console"
	NFENCE_KO=$kmod/nfence.ko setsid -w "$top/scripts/check-vm.sh" "$kver" \
		>"$dir/check-vm.out" 2>&1 </dev/null &
	vm_pid=$!
	while alive "$vm_pid"; do
		why=$(first_failure)
		if [ -z "$why" ] && [ $((SECONDS - start)) -ge "$MUTANT_TIMEOUT" ]; then
			why="timeout: no result after $MUTANT_TIMEOUT s"
		fi
		if [ -n "$why" ]; then
			stop_run "$vm_pid" || exit 2
			break
		fi
		sleep 2
	done
	if [ -z "$why" ]; then
		wait "$vm_pid" || rc=$?
	fi
	vm_pid=
	cp "$log" "$dir/vm.log" 2>/dev/null || true
	cp "$console" "$dir/vm.console.log" 2>/dev/null || true
	if ! grep -q '^vm-run: kernel' "$dir/vm.log" 2>/dev/null; then
		verdict="error: the guest never started the tests${why:+ ($why)}"
	elif [ -n "$why" ]; then
		verdict="killed by $why"
	elif [ "$rc" -eq 0 ]; then
		verdict=survived
	else
		# Failed without a failing line: a guest that died, a kselftest
		# plan mismatch, ... check-vm.sh says which.
		why=$(grep -h -m1 -E '^check-vm: FAIL|^kselftest: .*(planned|no failure|no totals)' \
			"$dir/check-vm.out" "$dir/vm.log" 2>/dev/null | head -n1 || true)
		[ -n "$why" ] || why=$(grep -E "^vm-$kver: " "$dir/check-vm.out" | tail -n1 || true)
		verdict="killed by ${why:-check-vm.sh exit $rc}"
	fi
	verdict=$(echo "$verdict" | tr -d '\r' | cut -c1-300)
	echo "$verdict" >"$dir/result"
}

if [ "$baseline" -eq 1 ]; then
	dir=$out/_baseline
	rm -rf "$dir"
	echo "mutants: baseline (the unmutated driver) on $kver" >&2
	if ! build_driver "$dir"; then
		echo "mutants: the unmutated driver does not build: $dir/build.log" >&2
		exit 2
	fi
	run_vm "$dir"
	case $verdict in
	survived) echo "mutants: baseline passes" >&2 ;;
	error:*)
		echo "mutants: baseline: $verdict" >&2
		exit 2
		;;
	*)
		echo "mutants: the unmutated driver fails the suite (${verdict#killed by }): nothing can be measured" >&2
		exit 1
		;;
	esac
fi

killed=0 survivors=() unbuilt=() errors=() i=0
results=$out/results.txt
: >"$results"
for name in "${names[@]}"; do
	dir=$out/$name
	rm -rf "$dir"
	start=$SECONDS
	i=$((i + 1))
	echo "mutants: [$i/${#names[@]}] $name" >&2
	if ! build_driver "$dir" "$name"; then
		line="mutant $name: did not build"
		unbuilt+=("$name")
		killed=$((killed + 1))
	else
		run_vm "$dir"
		line="mutant $name: $verdict"
		case $verdict in
		survived) survivors+=("$name") ;;
		error:*) errors+=("$name") ;;
		*) killed=$((killed + 1)) ;;
		esac
	fi
	echo "$line"
	echo "$line ($((SECONDS - start)) s)" >>"$results"
done

n=$((${#names[@]} - ${#errors[@]}))
{
	if [ "$n" -gt 0 ]; then
		echo "$n mutants, $killed killed ($((killed * 100 / n))%)"
	else
		echo "0 mutants, 0 killed"
	fi
	echo "survivors: ${survivors[*]:-none}"
	for name in "${survivors[@]}"; do
		IFS=$'\t' read -r file bug _ < <(mutants_py show "$LIST" "$name")
		echo "  $name ($file): $bug"
	done
	if [ "${#unbuilt[@]}" -ne 0 ]; then
		echo "did not build (defects of tests/mutants.txt, counted as killed): ${unbuilt[*]}"
	fi
	if [ "${#errors[@]}" -ne 0 ]; then
		echo "not measured (the guest never started the tests): ${errors[*]}"
	fi
} | tee "$out/summary.txt"
[ "${#errors[@]}" -eq 0 ] || exit 2
exit 0
