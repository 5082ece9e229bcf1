#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Check a trace-event JSON file (nfence-trace's output) against the rules
of Chrome's Trace Event Format (JSON Object Format) that the viewers rely
on, and against expectations given as options.

  nfence-trace-check.py [--tracks N] [--slices N] [--flows N]
                        [--min-tracks N] [--min-slices N] [--min-flows N]
                        [--track NAME]... [--process NAME]...
                        [--slice SPEC]... [--flow-link 'SPEC -> SPEC']...
                        [--no-flow SPEC]... [--min-ts US] [--max-ts US]
                        [--cat-flows CAT=N]... [--cross-flows CAT]...
                        FILE.json...

Format rules: a top-level object with a "traceEvents" list and a
"displayTimeUnit" of "ms" or "ns"; every event an object with a known
"ph", a string "name", integer "pid" and "tid" and (but "M") a finite
number "ts"; "X" with a finite "dur" >= 0; "i" with a scope "s" of t, p
or g; "s"/"f" flows with "cat" and "id", every "s" with exactly one "f"
of the same cat and id and the other way round, the "f" not before its
"s", and each bound to an "X" slice of its own track that encloses its
timestamp ("f" with "bp": "e"); "b"/"e" async pairs with "cat" and "id";
the "X" slices of one track nested or disjoint; "M" metadata with the
name of every process and every thread that has events. NaN and
Infinity are refused.

Each FILE is checked alone, with the same expectations. Tracks are the
(pid, tid) pairs that have events other than "M"; slices
are the "X" events; flows the "s"/"f" pairs. Prints "nfence-trace-check:
ok: ..." and exits 0, or prints each problem and exits 1 (2: bad usage
or a file that is not JSON).

A SPEC names one "X" slice: comma-separated KEY=VALUE, all of which it
must have, with KEY one of name, cat, track (its thread's name), process,
ts, dur (microseconds, equal within 0.0015) or args.ARG (a number, a
string, or true or false; an empty VALUE: no such arg). Values cannot hold a comma.
--slice SPEC: exactly one slice matches. --flow-link 'A -> B': A and B
each match exactly one slice, and a flow starts in A (its "s" on A's
track, within A's time) and finishes in B. --no-flow SPEC: no flow
starts or finishes in the one slice SPEC matches. --min-ts, --max-ts: no
event begins before, or ends after, this time (microseconds).
--cat-flows CAT=N: exactly N flows of category CAT. --cross-flows CAT:
every flow of category CAT starts in a task's process (pid below
4194304, nfence-trace's first adapter process) and finishes in an
adapter's, strictly later: a command queued on the CPU, logged on the GPU.
"""
import argparse
import collections
import json
import math
import sys

PHASES = {"X", "i", "I", "s", "t", "f", "b", "e", "n", "M", "B", "E", "C"}
METADATA = {"process_name", "process_sort_index", "thread_name",
            "thread_sort_index", "process_labels"}
# Slices ending within this of another's start do not overlap it: the
# timestamps are microseconds with three decimals.
EPS = 0.0015
# nfence-trace's adapters are processes from PID_MAX_LIMIT (2^22) up.
ADAPTER_PID_BASE = 4194304


def reject_constant(name):
    raise ValueError("%s is not JSON" % name)


def is_num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and \
        math.isfinite(v)


def is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def parse_spec(text):
    """'k=v,k=v' into a list of (key, value); ValueError if malformed."""
    spec = []
    for part in text.split(","):
        key, sep, value = part.partition("=")
        key = key.strip()
        if not sep or not (key in ("name", "cat", "track", "process", "ts",
                                   "dur") or
                           (key.startswith("args.") and len(key) > 5)):
            raise ValueError("bad slice spec %r: KEY=VALUE, KEY one of "
                             "name, cat, track, process, ts, dur, "
                             "args.ARG" % text)
        spec.append((key, value))
    return spec


def same_value(have, want):
    """An event's value equal to a spec's text: numbers within EPS."""
    if isinstance(have, bool):
        return want == ("true" if have else "false")
    if is_num(have):
        try:
            return abs(have - float(want)) <= EPS
        except ValueError:
            return False
    return isinstance(have, str) and have == want


def slice_matches(ev, spec, proc_names, thread_names):
    for key, want in spec:
        if key == "track":
            have = thread_names.get((ev["pid"], ev["tid"]))
        elif key == "process":
            have = proc_names.get(ev["pid"])
        elif key.startswith("args."):
            args = ev.get("args")
            args = args if isinstance(args, dict) else {}
            if want == "":
                if key[5:] in args:
                    return False
                continue
            have = args.get(key[5:])
        else:
            have = ev.get(key)
        if not same_value(have, want):
            return False
    return True


def check(doc, opts):
    errors = []

    def bad(i, ev, what):
        if len(errors) < 50:
            errors.append("event %d (%s): %s" % (i, json.dumps(ev)[:120],
                                                 what))
        elif len(errors) == 50:
            errors.append("...")

    if not isinstance(doc, dict):
        return ["the top level is not an object"], {}
    events = doc.get("traceEvents")
    if not isinstance(events, list):
        return ["no \"traceEvents\" list"], {}
    if doc.get("displayTimeUnit") not in ("ms", "ns"):
        errors.append("\"displayTimeUnit\" is not \"ms\" or \"ns\"")

    proc_names = {}
    thread_names = {}
    used = collections.OrderedDict()
    slices = collections.defaultdict(list)
    flow_s = {}
    flow_f = {}
    asyncs = collections.defaultdict(list)
    counts = collections.Counter()

    for i, ev in enumerate(events):
        if not isinstance(ev, dict):
            bad(i, ev, "not an object")
            continue
        ph = ev.get("ph")
        if ph not in PHASES:
            bad(i, ev, "unknown phase %r" % (ph,))
            continue
        counts[ph] += 1
        if not isinstance(ev.get("name"), str):
            bad(i, ev, "no string name")
        pid, tid = ev.get("pid"), ev.get("tid")
        if not is_int(pid) or not is_int(tid):
            bad(i, ev, "pid and tid must be integers")
            continue
        if ph == "M":
            args = ev.get("args")
            if ev.get("name") not in METADATA or not isinstance(args, dict):
                bad(i, ev, "unknown metadata or no args")
                continue
            if ev["name"] == "process_name":
                if not isinstance(args.get("name"), str):
                    bad(i, ev, "process_name without a string name")
                proc_names[pid] = args.get("name")
            elif ev["name"] == "thread_name":
                if not isinstance(args.get("name"), str):
                    bad(i, ev, "thread_name without a string name")
                thread_names[(pid, tid)] = args.get("name")
            elif ev["name"].endswith("sort_index") and \
                    not is_int(args.get("sort_index")):
                bad(i, ev, "sort_index is not an integer")
            continue
        ts = ev.get("ts")
        if not is_num(ts):
            bad(i, ev, "no finite ts")
            continue
        used[(pid, tid)] = True
        if ph == "X":
            dur = ev.get("dur")
            if not is_num(dur) or dur < 0:
                bad(i, ev, "X needs a finite dur >= 0")
                continue
            slices[(pid, tid)].append((ts, ts + dur, i))
        elif ph in ("i", "I"):
            if ev.get("s", "t") not in ("t", "p", "g"):
                bad(i, ev, "instant scope must be t, p or g")
        elif ph in ("s", "f", "t"):
            if not isinstance(ev.get("cat"), str) or \
                    not (is_int(ev.get("id")) or
                         isinstance(ev.get("id"), str)):
                bad(i, ev, "a flow event needs cat and id")
                continue
            key = (ev["cat"], ev["id"])
            table = flow_s if ph == "s" else flow_f
            if ph == "f" and ev.get("bp") != "e":
                bad(i, ev, "f must bind to its enclosing slice (bp e)")
            if ph != "t":
                if key in table:
                    bad(i, ev, "a second %s for flow %r" % (ph, key))
                table[key] = (i, ev)
        elif ph in ("b", "e", "n"):
            if not isinstance(ev.get("cat"), str) or "id" not in ev:
                bad(i, ev, "an async event needs cat and id")
                continue
            asyncs[(ev["cat"], ev["id"])].append((ph, ts, i))

    # Slices of a track: nested or disjoint.
    for track, lst in slices.items():
        lst.sort(key=lambda s: (s[0], -s[1]))
        stack = []
        for start, end, i in lst:
            while stack and stack[-1][1] <= start + EPS:
                stack.pop()
            if stack and end > stack[-1][1] + EPS:
                bad(i, events[i], "overlaps slice %d on its track without "
                    "nesting" % stack[-1][2])
            stack.append((start, end, i))

    def encloses(track, ts):
        return any(s - EPS <= ts <= e + EPS for s, e, _ in slices[track])

    for key, (i, ev) in flow_s.items():
        if key not in flow_f:
            bad(i, ev, "flow start without its finish")
        if not encloses((ev["pid"], ev["tid"]), ev["ts"]):
            bad(i, ev, "flow start in no slice of its track")
    for key, (i, ev) in flow_f.items():
        if key not in flow_s:
            bad(i, ev, "flow finish without its start")
            continue
        if ev["ts"] < flow_s[key][1]["ts"]:
            bad(i, ev, "flow finish before its start")
        if not encloses((ev["pid"], ev["tid"]), ev["ts"]):
            bad(i, ev, "flow finish in no slice of its track")

    for key, lst in asyncs.items():
        phases = [p for p, _, _ in lst if p != "n"]
        i = lst[0][2]
        if phases.count("b") != phases.count("e") or \
                (phases and phases[0] != "b"):
            bad(i, events[i], "async begin and end do not pair")
        elif lst[-1][1] < lst[0][1]:
            bad(i, events[i], "async end before its begin")

    for pid, tid in used:
        if pid not in proc_names:
            errors.append("pid %d has no process_name" % pid)
        if (pid, tid) not in thread_names:
            errors.append("pid %d tid %d has no thread_name" % (pid, tid))

    by_cat = collections.Counter(key[0] for key in flow_s)
    for cat, n in opts.cat_flows:
        if by_cat[cat] != n:
            errors.append("%d flows of cat %r, expected %d" %
                          (by_cat[cat], cat, n))
    for cat in opts.cross_flows:
        for key, (i, ev) in flow_s.items():
            if key[0] != cat or key not in flow_f:
                continue
            f_ev = flow_f[key][1]
            if not (ev["pid"] < ADAPTER_PID_BASE <= f_ev["pid"]):
                bad(i, ev, "flow of cat %r not from a task to an adapter"
                    % cat)
            elif not f_ev["ts"] > ev["ts"]:
                bad(i, ev, "flow of cat %r does not go forward in time"
                    % cat)

    stats = {
        "tracks": len(used),
        "slices": counts["X"],
        "flows": len(flow_s),
        "instants": counts["i"] + counts["I"],
        "async": counts["b"],
        "processes": len({p for p, _ in used}),
        "track_names": [thread_names.get(t) for t in used],
        "process_names": [proc_names.get(p) for p in {p for p, _ in used}],
    }

    def expect(what, value, exact, least):
        if exact is not None and value != exact:
            errors.append("%d %s, expected %d" % (value, what, exact))
        if least is not None and value < least:
            errors.append("%d %s, expected at least %d" % (value, what,
                                                           least))

    expect("tracks", stats["tracks"], opts.tracks, opts.min_tracks)
    expect("slices", stats["slices"], opts.slices, opts.min_slices)
    expect("flows", stats["flows"], opts.flows, opts.min_flows)
    for name in opts.track:
        if name not in stats["track_names"]:
            errors.append("no track named %r (tracks: %s)" %
                          (name, ", ".join(map(str,
                                               stats["track_names"]))))
    for name in opts.process:
        if name not in stats["process_names"]:
            errors.append("no process named %r" % name)

    # Expectations on single slices, and on the flows between them.
    xs = [ev for ev in events if isinstance(ev, dict) and ev.get("ph") == "X"
          and is_int(ev.get("pid")) and is_int(ev.get("tid")) and
          is_num(ev.get("ts")) and is_num(ev.get("dur"))]

    def one_slice(text, spec):
        found = [ev for ev in xs
                 if slice_matches(ev, spec, proc_names, thread_names)]
        if len(found) != 1:
            errors.append("%d slices match %r, expected 1" %
                          (len(found), text))
            return None
        return found[0]

    def within(flow_ev, sl):
        return (flow_ev["pid"], flow_ev["tid"]) == (sl["pid"], sl["tid"]) \
            and sl["ts"] - EPS <= flow_ev["ts"] <= \
            sl["ts"] + sl["dur"] + EPS

    pairs = [(s_ev, flow_f[key][1]) for key, (_, s_ev) in flow_s.items()
             if key in flow_f]
    for text, spec in opts.slice:
        one_slice(text, spec)
    for text, (src_text, src), (dst_text, dst) in opts.flow_link:
        a = one_slice(src_text, src)
        b = one_slice(dst_text, dst)
        if a is not None and b is not None and \
                not any(within(s_ev, a) and within(f_ev, b)
                        for s_ev, f_ev in pairs):
            errors.append("no flow from %r to %r" % (src_text, dst_text))
    for text, spec in opts.no_flow:
        a = one_slice(text, spec)
        if a is not None and any(within(s_ev, a) or within(f_ev, a)
                                 for s_ev, f_ev in pairs):
            errors.append("a flow starts or finishes in %r" % text)
    for ev in events:
        if not isinstance(ev, dict) or ev.get("ph") == "M" or \
                not is_num(ev.get("ts")):
            continue
        end = ev["ts"] + (ev["dur"] if is_num(ev.get("dur")) else 0)
        if opts.min_ts is not None and ev["ts"] < opts.min_ts - EPS:
            errors.append("%s at %.3f, before %.3f" %
                          (json.dumps(ev)[:100], ev["ts"], opts.min_ts))
        if opts.max_ts is not None and end > opts.max_ts + EPS:
            errors.append("%s ends at %.3f, after %.3f" %
                          (json.dumps(ev)[:100], end, opts.max_ts))
    return errors, stats


def cat_count_arg(text):
    cat, sep, n = text.rpartition("=")
    if not sep or not cat or not n.isdigit():
        raise argparse.ArgumentTypeError("%r: expected CAT=N" % text)
    return (cat, int(n))


def spec_arg(text):
    try:
        return (text, parse_spec(text))
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e))


def link_arg(text):
    src, sep, dst = text.partition(" -> ")
    if not sep:
        raise argparse.ArgumentTypeError("%r: expected 'SPEC -> SPEC'" %
                                         text)
    return (text, spec_arg(src.strip()), spec_arg(dst.strip()))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("files", nargs="+", metavar="FILE")
    for what in ("tracks", "slices", "flows"):
        p.add_argument("--" + what, type=int,
                       help="exactly this many " + what)
        p.add_argument("--min-" + what, type=int,
                       help="at least this many " + what)
    p.add_argument("--track", action="append", default=[],
                   help="a track (thread) with this name must have events")
    p.add_argument("--process", action="append", default=[],
                   help="a process with this name must have events")
    p.add_argument("--slice", action="append", default=[], type=spec_arg,
                   metavar="SPEC", help="exactly one slice matches SPEC")
    p.add_argument("--flow-link", action="append", default=[],
                   type=link_arg, metavar="'SPEC -> SPEC'",
                   help="a flow from the one slice to the other")
    p.add_argument("--no-flow", action="append", default=[], type=spec_arg,
                   metavar="SPEC", help="no flow starts or ends in it")
    p.add_argument("--min-ts", type=float, metavar="US",
                   help="no event begins before this time")
    p.add_argument("--max-ts", type=float, metavar="US",
                   help="no event ends after this time")
    p.add_argument("--cat-flows", action="append", default=[],
                   type=cat_count_arg, metavar="CAT=N",
                   help="exactly N flows of category CAT")
    p.add_argument("--cross-flows", action="append", default=[],
                   metavar="CAT", help="flows of CAT go from a task to an "
                   "adapter, forward in time")
    opts = p.parse_args()
    status = 0
    for name in opts.files:
        try:
            with open(name, encoding="utf-8") as f:
                doc = json.load(f, parse_constant=reject_constant)
        except (OSError, ValueError) as e:
            print("nfence-trace-check: %s: %s" % (name, e))
            status = max(status, 2)
            continue
        errors, stats = check(doc, opts)
        for e in errors:
            print("nfence-trace-check: %s: %s" % (name, e))
        if errors:
            print("nfence-trace-check: %s: FAILED" % name)
            status = max(status, 1)
            continue
        print("nfence-trace-check: ok: %s: %d processes, %d tracks, "
              "%d slices, %d flows, %d instants, %d async waits" %
              (name, stats["processes"], stats["tracks"], stats["slices"],
               stats["flows"], stats["instants"], stats["async"]))
    return status


if __name__ == "__main__":
    sys.exit(main())
