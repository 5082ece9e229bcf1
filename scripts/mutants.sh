#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Mutation testing ("make check-mutants"): how many deliberate faults the VM
# suite catches.
#
#   scripts/mutants.sh [--build-only] [--no-baseline] [--list] [NAME...]
#   scripts/mutants.sh --batch [--build-only] [--no-baseline] [NAME...]
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
# A mutant whose run: field is "kunit CASE..." is killed by KUnit cases,
# which the VM suite does not run: after its 6.12 build, scripts/kunit.sh
# runs each CASE (UML) on the mutated sources (NFENCE_KUNIT_DRV), in this
# mode and in --batch, and the first failing case kills it.
#
# First the unmutated driver runs through the same steps (the baseline): if
# it does not pass, nothing can be measured and the script stops (exit 1).
# The KUnit cases of the selected "kunit" mutants have a baseline of their
# own. --no-baseline skips both.
#
# --batch runs each mutant through its "run:" field of tests/mutants.txt
# (its header gives the format: "LOAD ITEM..." or "full") instead of the
# whole suite. One copy of the driver is built unmutated, then each mutant
# is applied to it, built incrementally, its nfence.ko kept in
# $BUILD/mutants/NAME/ and its file put back. Then ONE guest
# (scripts/mutants-guest.sh, booted as check-vm.sh boots) runs the jobs in
# order: first the unmutated module once per load the mutants use, with
# the union of their items (the baseline: if it fails, that run: set
# cannot measure anything and the script stops, exit 2), then each mutant:
# insmod with its load's parameters, its items up to the first failure,
# rmmod (60 s at most), no CMP thread left, no splat in the kernel log
# since its insmod. A mutant whose guest dies, or gives no result for
# MUTANT_TIMEOUT seconds, is killed; the host boots a new guest for the
# jobs after it, as it does after a mutant that leaves nfence loaded, a
# CMP thread, an oops or a BUG. The "full" mutants are run afterwards the
# default way (with its baseline). The lines and the summary are the
# default mode's; $BUILD/mutants/results.txt adds each mutant's build and
# run time, $BUILD/mutants/batch/ keeps the plans and the guests' logs.
# A mutant that only another subtest of the suite would kill survives
# here: the batch measures the run: fields as much as the tests.
# --batch --build-only stops after the builds. MUTANTS_REUSE=1 uses a
# mutant's nfence.ko from an earlier --batch again when nothing it was
# built from changed (kernel, driver sources, Makefile, uapi header, the
# mutant's diff).
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
# "N mutants: K apply, F do not apply". It also checks each run: field:
# the load is one of scripts/vm-run.sh's, each IGT binary, kselftest
# program and demo exists, each IGT subtest (or glob) matches a subtest of
# the binary's --list-subtests when build/tests/igt has the binary, not
# older than its source, else of its source (igt_subtest("...") names,
# igt_subtest_f formats as globs: generated names are checked only that
# far), none is one the load's expected skips let skip, and each kselftest
# test is a TEST/TEST_F of its program, and each KUnit item a suite (and
# case) of tests/kunit; one line per defect ("mutant NAME: run: ..."),
# then "N run: fields (F full, K KUnit), D defects; ...". Exits 1 when
# a mutant does not apply or a run: field has a defect.
#
# The kill rate is a measurement, not a verdict: the script exits 0 however
# many mutants survive. It exits 2 when it cannot measure: a mutant that
# does not apply (its original text must match exactly once), an unknown
# NAME, or a VM run that never started its tests (an infrastructure error).
#
# MUTANTS_KVER overrides the kernel (default: the installed 6.12, from
# scripts/kernels.sh); MUTANTS_LIST the list; BATCH_VM_TIMEOUT (default
# 21600) bounds one batch guest.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/lib.sh
. "$top/scripts/lib.sh"
BUILD=${BUILD:-$top/build}
export BUILD
LIST=${MUTANTS_LIST:-$top/tests/mutants.txt}
MUTANT_TIMEOUT=${MUTANT_TIMEOUT:-1200}
BATCH_VM_TIMEOUT=${BATCH_VM_TIMEOUT:-21600}
# Mutants are built and run plainly, whatever the caller's environment.
unset NFENCE_HARNESS_SELFTEST NFENCE_KO NFENCE_KUNIT_KO NFENCE_GCOV_OUT

build_only=0 baseline=1 list=0 check_apply=0 batch=0
names=()
while [ $# -gt 0 ]; do
	case $1 in
	--build-only) build_only=1 ;;
	--no-baseline) baseline=0 ;;
	--list) list=1 ;;
	--check-apply) check_apply=1 ;;
	--batch) batch=1 ;;
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
#   runs LIST NAME...           "NAME<TAB>FILE<TAB>RUN" for each
#   check-runs LIST TOP BUILD NAME...  each run: field is sound (exit 1)
#   plan LIST TOP OUT NAME...   the batch guest's job per mutant
#   baseline-plan LIST TOP KO NAME...  its baseline jobs, one per load
#   check LIST SRC NAME...      each applies to SRC (exactly one match per hunk)
#   check-all LIST SRC NAME...  the same for all, naming each that does not
#                               apply (exit 1), then a count
#   apply LIST SRC NAME         apply it in SRC, print the diff
#   files LIST                  the files the mutants touch
py=$(
	cat <<'EOF'
import difflib, fnmatch, os, re, subprocess, sys

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
                m = re.match(r'^(mutant|file|bug|expect|run): (\S.*)$', line)
                if not m:
                    die(where + ': expected "mutant:", "file:", "bug:", '
                        '"expect:", "run:" or "<<<"')
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
        for key in ('file', 'bug', 'expect', 'run'):
            if key not in m:
                die(m['where'] + ': mutant ' + m['name'] + ' has no "' +
                    key + ':"')
        if not m['hunks']:
            die(m['where'] + ': mutant ' + m['name'] + ' has no hunk')
        if '/' in m['file'] or not m['file'].endswith('.c'):
            die(m['where'] + ': file must be a .c file of the driver')
        why = run_syntax(m['run'])
        if why:
            die(m['where'] + ': mutant ' + m['name'] + ': run: ' + why)
    return mutants

# The "run:" field: "full", or "LOAD [ITEM...]" (see the list's header).
ITEM_RE = re.compile(
    r'^(igt:[a-z0-9_]+@[A-Za-z0-9_*?.-]+(,[A-Za-z0-9_*?.-]+)*'
    r'|kselftest:[a-z0-9_]+(@[A-Za-z0-9_]+\.[A-Za-z0-9_]+'
    r'(,[A-Za-z0-9_]+\.[A-Za-z0-9_]+)*)?'
    r'|demo:[a-z0-9-]+)$')

# run: kunit SUITE[.CASE] ...: KUnit cases, under UML (scripts/kunit.sh).
KUNIT_ITEM_RE = re.compile(r'^nfence_[a-z0-9_]+(\.[a-z0-9_]+)?$')

def run_syntax(run):
    words = run.split()
    if words == ['full']:
        return None
    if words[0] == 'kunit':
        if len(words) == 1:
            return 'kunit names no suite'
        for w in words[1:]:
            if not KUNIT_ITEM_RE.match(w):
                return 'bad KUnit item ' + repr(w)
        return None
    if not re.match(r'^[a-z0-9]+$', words[0]):
        return 'bad load name ' + repr(words[0])
    for w in words[1:]:
        if not ITEM_RE.match(w):
            return 'bad item ' + repr(w)
    return None

def split_run(run):
    words = run.split()
    return words[0], words[1:]

def loads(top):
    """The named loads, {NAME: PARAMS}: main as vm-run.sh's full mode
    loads it (two adapters), the others from its LOADS table."""
    path = os.path.join(top, 'scripts', 'vm-run.sh')
    with open(path, encoding='utf-8') as f:
        text = f.read()
    m = re.search(r"<<'LOADS'\n(.*?)^LOADS$", text, re.S | re.M)
    if not m:
        die(path + ': no LOADS table')
    # main's parameters are vm-run.sh's main_params in its full and main
    # modes (the one assignment of it that is indented).
    mp = re.findall(r'^\tmain_params="([^"]*)"$', text, re.M)
    if len(mp) != 1:
        die(path + ': no single main_params for the full and main modes: '
            'update loads() in scripts/mutants.sh')
    out = {'main': mp[0]}
    for line in m.group(1).splitlines():
        name, _, params = line.split('|')
        out[name] = params
    return out

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

def igt_subtests(top, build, binary):
    """(how, names, globs) for an IGT binary: its --list-subtests when the
    binary is built and not older than its source, else the literal
    igt_subtest("...") names of the source and its igt_subtest_f formats
    as globs; None when there is no such test."""
    src = os.path.join(top, 'tests', 'igt', binary + '.c')
    if not os.path.isfile(src):
        return None
    exe = os.path.join(build, 'tests', 'igt', binary)
    if (os.access(exe, os.X_OK) and
            os.path.getmtime(exe) >= os.path.getmtime(src)):
        try:
            out = subprocess.run([exe, '--list-subtests'], timeout=60,
                                 capture_output=True, text=True)
            if out.returncode == 0 and out.stdout.split():
                return 'binary', out.stdout.split(), []
        except (OSError, subprocess.TimeoutExpired):
            pass
    with open(src, encoding='utf-8') as f:
        text = f.read()
    names = re.findall(r'igt_subtest\(\s*"([^"]+)"\s*\)', text)
    fmts = re.findall(r'igt_subtest_f\(\s*"([^"]+)"', text)
    globs = [re.sub(r'%[-0-9.]*[lhz]*[sdiux]', '*', f) for f in fmts]
    return 'source', names, globs

def kselftests(top, binary):
    """The FIXTURE.TEST names of a kselftest program, from its source
    (TEST(x) is global.x), or None when it is no test program."""
    d = os.path.join(top, 'tools', 'testing', 'selftests', 'drivers', 'gpu',
                     'nfence')
    with open(os.path.join(d, 'Makefile'), encoding='utf-8') as f:
        mk = f.read()
    m = re.search(r'^TEST_GEN_PROGS :=((?:.*\\\n)*.*)$', mk, re.M)
    if not m or binary not in m.group(1).replace('\\', ' ').split():
        return None
    with open(os.path.join(d, binary + '.c'), encoding='utf-8') as f:
        text = f.read()
    out = ['global.' + t for t in re.findall(r'^TEST\(\s*(\w+)\s*\)', text,
                                             re.M)]
    out += ['%s.%s' % ft for ft in re.findall(
        r'^TEST_F(?:_TIMEOUT)?\(\s*(\w+)\s*,\s*(\w+)', text, re.M)]
    return out

def allowed_skips(top, load):
    out = set()
    with open(os.path.join(top, 'tests', 'expected-skips.txt'),
              encoding='utf-8') as f:
        for line in f:
            w = line.split()
            if w and not w[0].startswith('#') and w[0] == load and \
                    len(w) > 1 and w[1].startswith('igt:'):
                out.add(w[1][4:])
    return out

def kunit_suites(top):
    """{SUITE: [CASE, ...]} of tests/kunit/*_test.c."""
    out = {}
    kdir = os.path.join(top, 'tests', 'kunit')
    for f in sorted(os.listdir(kdir)):
        if not f.endswith('_test.c'):
            continue
        with open(os.path.join(kdir, f), encoding='utf-8') as fh:
            text = fh.read()
        names = re.findall(r'^\t\.name = "([a-z0-9_]+)",$', text, re.M)
        if names:
            out[names[-1]] = re.findall(
                r'^\s*KUNIT_CASE(?:_PARAM)?\(([a-z0-9_]+)', text, re.M)
    return out

def check_run(top, build, m, known_loads, cache):
    """The defects of a mutant's run: field, one string each."""
    bad = []
    if m['run'] == 'full':
        return bad
    load, items = split_run(m['run'])
    if load == 'kunit':
        suites = kunit_suites(top)
        for item in items:
            suite, _, case = item.partition('.')
            if suite not in suites:
                bad.append('no KUnit suite %s in tests/kunit' % suite)
            elif case and case not in suites[suite]:
                bad.append('KUnit suite %s has no case %s' % (suite, case))
        return bad
    if load not in known_loads:
        bad.append('no load %s in scripts/vm-run.sh' % load)
        return bad
    skips = allowed_skips(top, load)
    for item in items:
        kind, what = item.split(':', 1)
        if kind == 'igt':
            binary, subs = what.split('@', 1)
            if binary not in cache:
                cache[binary] = igt_subtests(top, build, binary)
            found = cache[binary]
            if found is None:
                bad.append('no IGT test %s (tests/igt/%s.c)' % (binary, binary))
                continue
            how, names, globs = found
            for sub in subs.split(','):
                hits = fnmatch.filter(names, sub)
                if not hits and not any(fnmatch.fnmatchcase(sub, g) or
                                        fnmatch.fnmatchcase(g, sub)
                                        for g in globs):
                    bad.append('%s@%s matches no subtest (%s)' %
                               (binary, sub, 'its --list-subtests' if
                                how == 'binary' else 'its source'))
                for h in hits:
                    full = binary + '@' + h
                    if any(fnmatch.fnmatchcase(full, a) for a in skips):
                        bad.append('%s skips in load %s '
                                   '(tests/expected-skips.txt)' % (full, load))
        elif kind == 'kselftest':
            binary, _, tests = what.partition('@')
            names = kselftests(top, binary)
            if names is None:
                bad.append('no kselftest program %s' % binary)
                continue
            for t in filter(None, tests.split(',')):
                if t not in names:
                    bad.append('%s has no test %s' % (binary, t))
        else:
            ex = os.path.join(top, 'libnfence', 'examples', what)
            if not (os.path.isfile(ex + '.c') or os.path.isfile(ex + '.cpp')):
                bad.append('no libnfence demo %s' % what)
    return bad

def batch_runs(mutants, names, known):
    """(name, load, items) of each of @names that the batch runs (not
    "full"), its load checked against @known."""
    for name in names:
        m = find(mutants, name)
        if m['run'] == 'full' or m['run'].startswith('kunit '):
            continue
        load, items = split_run(m['run'])
        if load not in known:
            die('mutant %s: run: no load %s' % (name, load))
        yield name, load, items

cmd, mutants = sys.argv[1], parse(sys.argv[2])
if cmd == 'names':
    for m in mutants:
        print(m['name'])
elif cmd == 'show':
    m = find(mutants, sys.argv[3])
    print('%s\t%s\t%s' % (m['file'], m['bug'], m['expect']))
elif cmd == 'runs':
    for name in sys.argv[3:]:
        m = find(mutants, name)
        print('%s\t%s\t%s' % (name, m['file'], m['run']))
elif cmd == 'check-runs':
    top, build, names = sys.argv[3], sys.argv[4], sys.argv[5:]
    known, cache, bad, full, kunit = loads(top), {}, 0, 0, 0
    for name in names:
        m = find(mutants, name)
        full += m['run'] == 'full'
        kunit += m['run'].startswith('kunit ')
        for why in check_run(top, build, m, known, cache):
            print('mutant %s: run: %s' % (name, why))
            bad += 1
    how = sorted({c[0] for c in cache.values() if c})
    print('%d run: fields (%d full, %d KUnit), %d defects; IGT subtests '
          'checked against %s' % (len(names), full, kunit, bad,
                                  ' and '.join(how) or 'nothing'))
    sys.exit(1 if bad else 0)
elif cmd == 'plan':
    # plan LIST TOP OUT NAME...: "NAME|KO|LOAD|PARAMS|ITEMS" per mutant,
    # the ko in OUT/NAME/nfence.ko; "full" mutants are left out.
    top, out, names = sys.argv[3], sys.argv[4], sys.argv[5:]
    known = loads(top)
    for name, load, items in batch_runs(mutants, names, known):
        print('|'.join([name, os.path.join(out, name, 'nfence.ko'), load,
                        known[load], ' '.join(items)]))
elif cmd == 'baseline-plan':
    # baseline-plan LIST TOP KO NAME...: one job per load the mutants use,
    # "_baseline-LOAD|KO|LOAD|PARAMS|ITEMS", ITEMS the union of theirs.
    top, ko, names = sys.argv[3], sys.argv[4], sys.argv[5:]
    known, per_load = loads(top), {}
    for name, load, items in batch_runs(mutants, names, known):
        merged = per_load.setdefault(load, {})
        for item in items:
            kind, what = item.split(':', 1)
            head, _, subs = what.partition('@')
            key = (kind, head)
            if not subs:
                merged[key] = None  # the whole program
                continue
            merged.setdefault(key, [])
            for sub in subs.split(','):
                if merged[key] is not None and sub not in merged[key]:
                    merged[key].append(sub)
    for load, merged in per_load.items():
        items = [k + ':' + h + ('@' + ','.join(subs) if subs else '')
                 for (k, h), subs in merged.items()]
        print('|'.join(['_baseline-' + load, ko, load, known[load],
                        ' '.join(items)]))
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
	# Reads the driver's files, the tests' sources (and the IGT
	# binaries, when built), writes nothing.
	rc=0
	mutants_py check-all "$LIST" "$top/drivers/gpu/drm/nfence" "${names[@]}" || rc=$?
	mutants_py check-runs "$LIST" "$top" "$BUILD" "${names[@]}" || {
		r=$?
		[ "$r" -gt "$rc" ] && rc=$r
	}
	exit "$rc"
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

# build_module: nfence.ko from $src into $kmod (incrementally: the module
# target copies only the files whose contents changed).
build_module() {
	# Our own make, not a sub-make of "make check-mutants".
	env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS \
		make -C "$top" -s -j"$(nproc)" module KVER="$kver" \
		DRV_SRC="$src" KMOD_DIR="$kmod"
}

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
	build_module >"$dir/build.log" 2>&1
}

warnings() { # DIR: compiler warnings in its build log
	grep -c 'warning:' "$1/build.log" || true
}

if [ "$build_only" -eq 1 ] && [ "$batch" -eq 0 ]; then
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
		line=$(grep -a -m1 -E '^(fail: |vm-check: fail|not ok )' "$log" |
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
	if ! grep -aq '^vm-run: kernel' "$dir/vm.log" 2>/dev/null; then
		verdict="error: the guest never started the tests${why:+ ($why)}"
	elif [ -n "$why" ]; then
		verdict="killed by $why"
	elif [ "$rc" -eq 0 ]; then
		verdict=survived
	else
		# Failed without a failing line: a guest that died, a kselftest
		# plan mismatch, ... check-vm.sh says which.
		why=$(grep -a -h -m1 -E '^check-vm: FAIL|^kselftest: .*(planned|no failure|no totals)' \
			"$dir/check-vm.out" "$dir/vm.log" 2>/dev/null | head -n1 || true)
		[ -n "$why" ] || why=$(grep -aE "^vm-$kver: " "$dir/check-vm.out" | tail -n1 || true)
		verdict="killed by ${why:-check-vm.sh exit $rc}"
	fi
	verdict=$(echo "$verdict" | tr -d '\r' | cut -c1-300)
	echo "$verdict" >"$dir/result"
}

# run_kunit DIR ITEM...: the KUnit cases ITEM (SUITE or SUITE.CASE) on
# the driver in $src, with scripts/kunit.sh (UML); sets verdict to "killed
# by ..." at the first item whose cases fail, "survived", or "error: ..."
# when an item ran no case at all (no kernel source, a UML build that
# failed: nothing measured). Each item's output in DIR/kunit-ITEM.log.
run_kunit() {
	local dir=$1 item rc why klog
	shift
	verdict=survived
	for item in "$@"; do
		rc=0
		klog=$dir/kunit-$item.log
		NFENCE_KUNIT_DRV=$src KUNIT_FILTER=$item "$top/scripts/kunit.sh" \
			>"$klog" 2>&1 </dev/null || rc=$?
		[ "$rc" -eq 0 ] && continue
		why=$(grep -m1 -oE '\[(FAILED|CRASHED)\] [a-z0-9_]+' "$klog" || true)
		if [ -z "$why" ] && ! grep -qE 'Testing complete\. Ran [1-9]' "$klog"; then
			verdict="error: KUnit $item ran no case (kunit.sh exit $rc, $klog)"
		else
			verdict="killed by KUnit $item: ${why:-$(grep -m1 '^kunit: ' "$klog" || echo "kunit.sh exit $rc")}"
		fi
		return
	done
}

killed=0 survivors=() unbuilt=() errors=()
total=${#names[@]}
results=$out/results.txt
: >"$results"

# record NAME VERDICT TIMES: count a mutant's verdict ("survived", "killed
# by ...", "did not build", "error: ...") and print its line.
record() {
	local name=$1 v=$2 times=$3 line
	case $v in
	survived) survivors+=("$name") ;;
	error:*) errors+=("$name") ;;
	"did not build")
		unbuilt+=("$name")
		killed=$((killed + 1))
		;;
	*) killed=$((killed + 1)) ;;
	esac
	line="mutant $name: $v"
	echo "$line"
	echo "$line ($times)" >>"$results"
	mkdir -p "$out/$name"
	echo "$v" >"$out/$name/result"
}

if [ "$batch" -eq 1 ]; then
	bdir=$out/batch
	rm -rf "$bdir"
	mkdir -p "$bdir"
	# "NAME<TAB>FILE<TAB>RUN" for each, in one call of the parser.
	batch_names=() full_names=()
	declare -A file_of=()
	while IFS=$'\t' read -r name file run; do
		file_of[$name]=$file
		case $run in
		full | kunit\ *) full_names+=("$name") ;;
		*) batch_names+=("$name") ;;
		esac
	done < <(mutants_py runs "$LIST" "${names[@]}")

	# One copy of the driver, built once unmutated; then each mutant
	# applied to it, built incrementally (the module target copies only
	# the files whose contents changed), its nfence.ko kept, its file
	# put back. Mutants of one file follow each other, so a put-back
	# file is built again once per file, not once per mutant.
	# With MUTANTS_REUSE=1 a module built before is used again when its
	# stamp (the kernel, the driver's sources, the top Makefile, the uapi
	# header and the mutant's diff) is the same.
	srcsum=$( (cd "$drv" && find . -path ./tests -prune -o -type f -print0 |
		sort -z | xargs -0 sha256sum
		sha256sum "$top/Makefile" "$top/include/uapi/drm/nfence_drm.h") |
		sha256sum | cut -c1-64)
	reuse=${MUTANTS_REUSE:-0}
	rm -rf "$src" "$kmod"
	mkdir -p "$src" "$out/_baseline"
	rsync -a --exclude=tests "$drv/" "$src/" || exit 2
	echo "mutants: --batch: building the unmutated driver and ${#batch_names[@]} mutants for $kver" >&2
	if [ "$reuse" = 1 ] && [ -e "$out/_baseline/nfence.ko" ] &&
		[ "$(cat "$out/_baseline/stamp" 2>/dev/null)" = "$kver $srcsum" ]; then
		echo "mutants: the unmutated driver: built before, reused" >&2
	elif build_module >"$out/_baseline/build.log" 2>&1; then
		cp "$kmod/nfence.ko" "$out/_baseline/nfence.ko"
		echo "$kver $srcsum" >"$out/_baseline/stamp"
	else
		echo "mutants: the unmutated driver does not build: $out/_baseline/build.log" >&2
		exit 2
	fi
	mapfile -t ordered < <(for name in "${batch_names[@]}"; do
		printf '%s\t%s\n' "${file_of[$name]}" "$name"
	done | sort -s -t $'\t' -k1,1)
	built=() build_total=0
	declare -A build_s=()
	for entry in "${ordered[@]}"; do
		file=${entry%%$'\t'*} name=${entry#*$'\t'}
		dir=$out/$name
		cp "$src/$file" "$bdir/original.c"
		mutants_py apply "$LIST" "$src" "$name" >"$bdir/mutant.diff" || exit 2
		stamp="$kver $srcsum $(sha256sum <"$bdir/mutant.diff" | cut -c1-64)"
		if [ "$reuse" = 1 ] && [ -e "$dir/nfence.ko" ] &&
			[ "$(cat "$dir/stamp" 2>/dev/null)" = "$stamp" ]; then
			cat "$bdir/original.c" >"$src/$file"
			build_s[$name]=reused
			built+=("$name")
			continue
		fi
		rm -rf "$dir"
		mkdir -p "$dir"
		mv "$bdir/mutant.diff" "$dir/mutant.diff"
		t0=$(date +%s%N)
		if build_module >"$dir/build.log" 2>&1; then
			cp "$kmod/nfence.ko" "$dir/nfence.ko"
			echo "$stamp" >"$dir/stamp"
			built+=("$name")
		fi
		ms=$((($(date +%s%N) - t0) / 1000000))
		build_s[$name]="$((ms / 1000)).$(printf %03d $((ms % 1000))) s"
		build_total=$((build_total + ms))
		# Put back with a new modification time: the next build
		# compiles it again.
		cat "$bdir/original.c" >"$src/$file"
		echo "mutants: built $name in ${build_s[$name]}" >&2
	done
	if [ "${#ordered[@]}" -gt 0 ]; then
		echo "mutants: ${#ordered[@]} mutants built in $((build_total / 1000)) s (reused ones count 0)" >&2
	fi
	if [ "$build_only" -eq 1 ]; then
		for name in "${batch_names[@]}"; do
			if [ -e "$out/$name/nfence.ko" ]; then
				echo "mutant $name: builds (${build_s[$name]})"
			else
				echo "mutant $name: did not build ($out/$name/build.log)"
			fi
		done
		[ "${#built[@]}" -eq "${#batch_names[@]}" ]
		exit
	fi
	for name in "${batch_names[@]}"; do
		if [ ! -e "$out/$name/nfence.ko" ]; then
			record "$name" "did not build" "build ${build_s[$name]}"
		fi
	done

	# The jobs: the baseline (per load, the union of its mutants' items,
	# with the unmutated module) first, then each mutant that built.
	if [ "${#built[@]}" -gt 0 ]; then
		if [ "$baseline" -eq 1 ]; then
			mutants_py baseline-plan "$LIST" "$top" \
				"$out/_baseline/nfence.ko" "${built[@]}" >"$bdir/jobs.txt"
		else
			: >"$bdir/jobs.txt"
		fi
		mutants_py plan "$LIST" "$top" "$out" "${built[@]}" >>"$bdir/jobs.txt"
	else
		: >"$bdir/jobs.txt"
	fi
	cp "$top/scripts/mutants-guest.sh" "$bdir/guest.sh"
	cp "$top/scripts/lib.sh" "$bdir/lib.sh"
	cp "$top/tests/igt/run-igt.sh" "$BUILD/mutants-run-igt.sh"
	mapfile -t jobs <"$bdir/jobs.txt"
	declare -A verdict_of=() run_s=()
	boot=0 stalls=0 batch_start=$SECONDS
	while [ "${#jobs[@]}" -gt 0 ]; do
		boot=$((boot + 1))
		plan=$bdir/plan-$boot.txt
		blog=$bdir/vm-$boot.log
		bcon=$bdir/vm-$boot.console.log
		printf '%s\n' "${jobs[@]}" >"$plan"
		echo "mutants: --batch: boot $boot, ${#jobs[@]} jobs from ${jobs[0]%%|*}, log in $blog" >&2
		: >"$blog"
		setsid -w bash -c '. "$1"; shift; nfence_vng "$@"' _ \
			"$top/scripts/lib.sh" "$kver" "$BATCH_VM_TIMEOUT" "$blog" \
			"$bcon" "$bdir/guest.sh $plan $BUILD $top $bdir/lib.sh" \
			>/dev/null 2>&1 </dev/null &
		vm_pid=$!
		why='' seen=0 last=$SECONDS
		while alive "$vm_pid"; do
			now=$(grep -cE '^batch-(start|result):' "$blog" || true)
			if [ "$now" -ne "$seen" ]; then
				seen=$now last=$SECONDS
			fi
			if grep -qE '^batch-result: _baseline-[^ ]+ [0-9]+ killed' "$blog"; then
				why=baseline
			elif [ "$seen" -gt 0 ] && [ $((SECONDS - last)) -ge "$MUTANT_TIMEOUT" ]; then
				why="timeout: no result after $MUTANT_TIMEOUT s (the guest hung)"
			elif [ "$seen" -eq 0 ] && [ $((SECONDS - last)) -ge "$MUTANT_TIMEOUT" ]; then
				why="timeout: the guest did not start in $MUTANT_TIMEOUT s"
			fi
			if [ -n "$why" ]; then
				stop_run "$vm_pid" || exit 2
				break
			fi
			sleep 2
		done
		rc=0
		if [ -z "$why" ]; then
			wait "$vm_pid" || rc=$?
		fi
		vm_pid=
		tr -d '\r' <"$blog" >"$bdir/vm-$boot.clean.log"
		blog=$bdir/vm-$boot.clean.log
		if bad=$(grep -m1 -E '^batch-result: _baseline-[^ ]+ [0-9]+ killed' "$blog"); then
			bad=${bad#batch-result: }
			load=${bad%% *}
			load=${load#_baseline-}
			echo "mutants: the unmutated driver fails the run: set of load $load: ${bad#* * killed by }" >&2
			echo "mutants: that set cannot measure anything (mutants in load $load: $(grep -E "^[^|]+\|[^|]+\|$load\|" "$bdir/jobs.txt" | grep -v '^_baseline' | cut -d'|' -f1 | tr '\n' ' '))" >&2
			exit 2
		fi
		if ! grep -q '^batch: kernel' "$blog"; then
			reason=$(nfence_vm_start_failure "$bcon" "$rc" 2>&1 | head -n1)
			echo "mutants: --batch: the guest never started the jobs: ${why:-$reason}" >&2
			echo "--- last lines of the console ($bcon) ---" >&2
			tail -n 20 "$bcon" >&2
			exit 2
		fi
		# The jobs with a result are done; the first one without is
		# the one the guest died in (killed), unless it never started.
		left=()
		for job in "${jobs[@]}"; do
			name=${job%%|*}
			if [ -n "${verdict_of[$name]:-}" ]; then
				continue
			fi
			res=$(grep -m1 -E "^batch-result: $name [0-9]+ " "$blog" || true)
			if [ -n "$res" ]; then
				res=${res#batch-result: "$name" }
				run_s[$name]=${res%% *}
				verdict_of[$name]=${res#* }
				continue
			fi
			left+=("$job")
		done
		if [ "${#left[@]}" -eq 0 ]; then
			break
		fi
		name=${left[0]%%|*}
		if grep -qxF "batch-start: $name" "$blog"; then
			# It started and its guest died or hung.
			line=$(tr -d '\r' <"$bcon" |
				sed -n "/nfence-batch: start $name\$/,\$p" |
				grep -m1 -E "$NFENCE_SPLAT_RE" | tr -d '\r' || true)
			if [ -n "$why" ]; then
				v="killed by $why"
			elif [ -n "$line" ]; then
				v="killed by kernel: $line (the guest died)"
			else
				v="killed by the guest stopped during its tests (status $rc)"
			fi
			verdict_of[$name]=$v
			run_s[$name]=$((SECONDS - last))
			if [[ $name == _baseline-* ]]; then
				echo "mutants: the unmutated driver: $name: $v" >&2
				exit 2
			fi
			left=("${left[@]:1}")
			stalls=0
		elif grep -q '^batch-reboot: ' "$blog"; then
			stalls=0
		else
			# The guest stopped between two jobs: once may be the
			# machine, twice in a row is a broken harness.
			stalls=$((stalls + 1))
			if [ "$stalls" -ge 2 ]; then
				echo "mutants: --batch: the guest stopped twice before $name started (status $rc)" >&2
				exit 2
			fi
		fi
		jobs=("${left[@]}")
	done
	batch_s=$((SECONDS - batch_start))
	if [ "$baseline" -eq 1 ] && [ "${#built[@]}" -gt 0 ]; then
		echo "mutants: baseline passes (every load's run: set, unmutated)" >&2
	fi
	for name in "${batch_names[@]}"; do
		[ -e "$out/$name/nfence.ko" ] || continue
		v=${verdict_of[$name]:-"error: no result from the guest"}
		record "$name" "$v" "build ${build_s[$name]}, run ${run_s[$name]:-?} s"
	done
	echo "mutants: --batch: ${#built[@]} mutants run in $boot boots, $batch_s s (baseline included)" >&2
	# "run: full" mutants: the full suite, one VM each; "run: kunit"
	# ones: their KUnit cases.
	names=("${full_names[@]}")
	if [ "${#names[@]}" -eq 0 ]; then
		baseline=0
	fi
fi

# What each mutant runs: the VM suite, or ("run: kunit") KUnit cases.
declare -A run_of=()
vm_names=0 kunit_items=()
while IFS=$'\t' read -r name _ run; do
	run_of[$name]=$run
	case $run in
	kunit\ *) read -ra items <<<"${run#kunit }"; kunit_items+=("${items[@]}") ;;
	*) vm_names=$((vm_names + 1)) ;;
	esac
done < <([ "${#names[@]}" -eq 0 ] || mutants_py runs "$LIST" "${names[@]}")

if [ "$baseline" -eq 1 ] && [ "${#kunit_items[@]}" -ne 0 ]; then
	dir=$out/_baseline-kunit
	rm -rf "$dir"
	echo "mutants: KUnit baseline (the unmutated driver): ${kunit_items[*]}" >&2
	rm -rf "$src"
	mkdir -p "$src" "$dir"
	rsync -a --exclude=tests "$drv/" "$src/" || exit 2
	mapfile -t items < <(printf '%s\n' "${kunit_items[@]}" | sort -u)
	run_kunit "$dir" "${items[@]}"
	case $verdict in
	survived) ;;
	error:*)
		echo "mutants: KUnit baseline: $verdict" >&2
		exit 2
		;;
	*)
		echo "mutants: the unmutated driver fails the KUnit cases" \
			"(${verdict#killed by }): nothing can be measured" >&2
		exit 1
		;;
	esac
	echo "mutants: KUnit baseline passes" >&2
fi

if [ "$baseline" -eq 1 ] && [ "$vm_names" -ne 0 ]; then
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

i=0
for name in "${names[@]}"; do
	dir=$out/$name
	rm -rf "$dir"
	start=$SECONDS
	i=$((i + 1))
	echo "mutants: [$i/${#names[@]}] $name" >&2
	if ! build_driver "$dir" "$name"; then
		record "$name" "did not build" "$((SECONDS - start)) s"
		continue
	fi
	case ${run_of[$name]} in
	kunit\ *)
		read -ra items <<<"${run_of[$name]#kunit }"
		run_kunit "$dir" "${items[@]}"
		;;
	*) run_vm "$dir" ;;
	esac
	record "$name" "$verdict" "$((SECONDS - start)) s"
done

n=$((total - ${#errors[@]}))
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
