#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The summary of make coverage (scripts/coverage.sh), from lcov's tracefile.

    coverage-report.py TRACEFILE TOP UNREACHED_OUT

Prints the totals of lines, functions and branches of the driver's files,
the goals (lines >= 90%, every function, every error return of an ioctl
handler) as met or missed, and what is known of the driver's error
returns; writes to UNREACHED_OUT every function no test reached and every
error return not known to be reached, as paths relative to TOP (the
repository, whose files the tracefile names).

A function is reached when its own counter (its out-of-line copy) says it
was called, or when a line of its body was counted: gcc inlines many
static functions into every caller, whose out-of-line copy, if any, is
never called, and gcov counts the inlined copies' lines as the function's
own. The summary says how many were reached that way only.

An error return is a line whose code returns or assigns a negative errno
constant (-EINVAL, ERR_PTR(-ENOMEM), ret = -EFAULT, ...). At -O2 gcc
usually gives it no counter of its own: the constant becomes a value on
the edge out of the if, and the block that held it is gone before gcov
instruments the function. Each is judged by the first of these rules
that applies:

  line     its own counter: reached, or not reached;
  block    another counted line of the braced block it sits in (the
           "goto out;" after "ret = -EFAULT;"): reached, or not reached;
  branches every branch of the if that guards it was taken (some input
           made the condition true): reached; none was ever evaluated: no
           evidence;
  flow     the if was entered E times (the two branches of its first
           condition add up to E) and the statement its false path goes to
           (an else's, or the next one when the block returns or jumps)
           ran N times: reached when E > N, no evidence when E == N;
  undecided for any other shape.

"No evidence" is not "not reached": gcc may thread a jump past the if's
counters (a lookup that returned NULL jumping straight to the error), and
such an error return shows as never taken although a test reached it.
Only "line" and "block" say "not reached". "In ioctl handlers" counts
those whose function ends in _ioctl.

    coverage-report.py --validate TRACEFILE

judges every error return that has a counter of its own by the other
rules, as if it had none, prints how often they agree with its counter,
and exits 1 if any disagrees.
"""

import os
import re
import sys

ERRNO = re.compile(r"-E[A-Z][A-Z0-9]*\b")
IF_START = re.compile(r"^(\}\s*)?(else\s+)?if\s*\(")
RETURNISH = re.compile(r"\breturn\b|[^=!<>]=[^=]")
GOAL_LINES = 90.0


class Source:
    """One SF record of the tracefile."""

    def __init__(self, path):
        self.path = path
        self.lines = {}         # line -> count
        self.funcs = {}         # name -> start line
        self.func_hits = {}     # name -> count
        self.branches = []      # taken counts (None: never evaluated)
        self.line_branches = {}  # line -> its taken counts, in order


def parse(tracefile):
    sources = []
    cur = None
    with open(tracefile) as f:
        for raw in f:
            tag, _, val = raw.rstrip("\n").partition(":")
            if tag == "SF":
                cur = Source(val)
                sources.append(cur)
            elif tag == "DA":
                line, count = val.split(",")[:2]
                cur.lines[int(line)] = int(count)
            elif tag == "FN":
                line, name = val.split(",", 1)
                cur.funcs[name] = int(line)
            elif tag == "FNDA":
                count, name = val.split(",", 1)
                cur.func_hits[name] = int(count)
            elif tag == "BRDA":
                line, taken = val.split(",")[0], val.split(",")[3]
                count = None if taken == "-" else int(taken)
                cur.branches.append(count)
                cur.line_branches.setdefault(int(line), []).append(count)
    return sources


def body_end(text, start):
    """The line of the closing brace of the function defined at @start."""
    for i in range(start, len(text) + 1):
        if text[i - 1] == "}":
            return i
    return start


def func_reached(src, text, name):
    """Whether @name ran: its own counter (the out-of-line copy), or, for a
    function gcc inlined into its callers, a counted line of its body
    (gcov counts an inlined copy's lines as the function's own lines)."""
    if src.func_hits.get(name, 0):
        return "called"
    start = src.funcs[name]
    if any(src.lines.get(i, 0) for i in range(start, body_end(text, start) + 1)):
        return "inlined"
    return None


def pct(hit, total):
    return 100.0 * hit / total if total else 100.0


def enclosing(src, line):
    best, best_line = "?", 0
    for name, start in src.funcs.items():
        if best_line < start <= line:
            best, best_line = name, start
    return best


def strip(text, line):
    return text[line - 1].strip() if 0 < line <= len(text) else ""


def indent(text, line):
    code = text[line - 1]
    return len(code) - len(code.lstrip("\t"))


def guard(text, line):
    """The if guarding the error return at LINE: (first line of the if,
    last line of its condition, True if the body is braced, last line of
    the body), or None for any other shape (a switch case, a loop...)."""
    depth = indent(text, line)
    above = line - 1
    # Up over the statements before it in its block, to the line one tab
    # out: the end of the if's condition.
    while above > 0 and (not strip(text, above) or
                         indent(text, above) >= depth):
        if line - above > 20:
            return None
        above -= 1
    if above < 1 or indent(text, above) != depth - 1:
        return None
    braced = strip(text, above).endswith("{")
    if not braced and (above != line - 1 or
                       not strip(text, above).endswith(")")):
        return None
    cond_end = start = above
    while not IF_START.match(strip(text, start)):
        start -= 1
        code = strip(text, start)
        if cond_end - start > 6 or not code or code.endswith((";", "{", "}")):
            return None
    if not braced:
        return start, cond_end, False, line
    end = line
    while end < len(text):
        end += 1
        if strip(text, end).startswith("}") and indent(text, end) == depth - 1:
            return start, cond_end, True, end - 1
    return None


REACHED, NOT_REACHED, NO_EVIDENCE = "reached", "not reached", "no evidence"


def judge(src, text, line, own=True):
    """(rule, verdict) for the error return at LINE: REACHED, NOT_REACHED
    (a counter of its own block is 0), NO_EVIDENCE (the counters of the if
    guarding it say it never led there) or None (undecided). With
    own=False the line's own counter is ignored."""
    if own and line in src.lines:
        return "line", REACHED if src.lines[line] else NOT_REACHED
    g = guard(text, line)
    if not g:
        return "undecided", None
    start, cond_end, braced, body_end = g
    if braced:
        counted = [src.lines[k] for k in range(cond_end + 1, body_end + 1)
                   if k in src.lines and k != line]
        if counted:
            return "block", REACHED if max(counted) else NOT_REACHED
    taken = []
    for k in range(start, cond_end + 1):
        taken += src.line_branches.get(k, [])
    if len(taken) < 2:
        return "undecided", None
    if all(t is None for t in taken):
        return "branches", NO_EVIDENCE
    if all(t for t in taken):
        return "branches", REACHED
    if taken[0] is None or taken[1] is None:
        return "undecided", None
    entered = taken[0] + taken[1]
    # The statement the false path goes to: an else if's condition, an
    # else's body, or (when the body leaves) the next statement.
    close = body_end + 1 if braced else line + 1
    code = strip(text, close)
    if code.startswith(("} else if", "else if")) and close in src.lines:
        after = close
    elif code.startswith(("} else", "else")):
        after = close + 1
    else:
        # Without an else, the false path reaches the next statement
        # alone only if the body leaves: a return or a goto.
        body = " ".join(strip(text, k) for k in range(cond_end + 1,
                                                       body_end + 1))
        if not re.search(r"\b(return|goto)\b", body):
            return "undecided", None
        after = close + 1 if braced else close
    # Blank lines and braces have no counter; any other line without one
    # (a statement gcc folded elsewhere) leaves the flow unknown.
    while after <= len(text) and after not in src.lines:
        if strip(text, after) not in ("", "{", "} else {"):
            return "undecided", None
        after += 1
    if after > len(text) or strip(text, after).endswith(":"):
        return "undecided", None
    ran = entered - src.lines[after]
    if ran < 0:
        return "undecided", None
    return "flow", REACHED if ran else NO_EVIDENCE


def error_returns(src, text):
    for line, code in enumerate(text, 1):
        code = code.strip()
        if code.startswith(("*", "/*", "//")):
            continue
        if ERRNO.search(code) and RETURNISH.search(code):
            yield line, code


def validate(sources):
    agree, disagree, undecided = 0, [], 0
    for src in sources:
        with open(src.path) as f:
            text = f.read().split("\n")
        for line, code in error_returns(src, text):
            if line not in src.lines:
                continue
            rule, reached = judge(src, text, line, own=False)
            if reached is None:
                undecided += 1
            elif (reached == REACHED) == (src.lines[line] > 0):
                agree += 1
            else:
                disagree.append(f"{src.path}:{line} {rule}: judged "
                                f"{reached}, counter {src.lines[line]}")
    print("coverage: validate: %d agree with their counter, %d disagree, "
          "%d undecided" % (agree, len(disagree), undecided))
    for x in disagree:
        print("  " + x)
    return 1 if disagree else 0


VERDICTS = (REACHED, NOT_REACHED, NO_EVIDENCE, None)


def main():
    if sys.argv[1:2] == ["--validate"]:
        return validate(parse(sys.argv[2]))
    tracefile, top, unreached_out = sys.argv[1:4]
    sources = parse(tracefile)
    if not sources:
        print("coverage: the tracefile has no source file", file=sys.stderr)
        return 1
    lines = [0, 0]
    funcs = [0, 0]
    branches = [0, 0]
    # verdict -> count, of all error returns and of those in ioctl handlers
    errs = dict.fromkeys(VERDICTS, 0)
    ioctl_errs = dict.fromkeys(VERDICTS, 0)
    listed = {v: [] for v in VERDICTS if v != REACHED}
    rules = {}
    dead_funcs = []
    inlined = 0
    for src in sorted(sources, key=lambda s: s.path):
        rel = os.path.relpath(src.path, top)
        with open(src.path) as f:
            text = f.read().split("\n")
        lines[0] += sum(1 for c in src.lines.values() if c)
        lines[1] += len(src.lines)
        branches[0] += sum(1 for t in src.branches if t)
        branches[1] += len(src.branches)
        for name, start in sorted(src.funcs.items(), key=lambda i: i[1]):
            how = func_reached(src, text, name)
            funcs[1] += 1
            if how:
                funcs[0] += 1
                inlined += how == "inlined"
            else:
                dead_funcs.append(f"{rel}:{start} {name}")
        for line, code in error_returns(src, text):
            rule, verdict = judge(src, text, line)
            func = enclosing(src, line)
            errs[verdict] += 1
            if func.endswith("_ioctl"):
                ioctl_errs[verdict] += 1
            rules[rule] = rules.get(rule, 0) + 1
            if verdict != REACHED:
                listed[verdict].append(f"{rel}:{line} {func}: {code} "
                                       f"[{rule}]")

    line_pct = pct(*lines)
    print("coverage: lines %.1f%% (%d of %d), functions %.1f%% (%d of %d, "
          "%d of them reached inlined only), branches %.1f%% (%d of %d)" %
          (line_pct, lines[0], lines[1], pct(*funcs), funcs[0], funcs[1],
           inlined, pct(*branches), branches[0], branches[1]))
    print("coverage: goal: lines >= %d%%: %s; functions 100%%: %s; every "
          "error return of an ioctl handler: %s" %
          (GOAL_LINES, "met" if line_pct >= GOAL_LINES else "missed",
           "met" if funcs[0] == funcs[1] else "missed",
           "met" if ioctl_errs[REACHED] == sum(ioctl_errs.values())
           else "missed"))
    for name, tally in (("error returns", errs),
                        ("in ioctl handlers", ioctl_errs)):
        print("coverage: %s: %d reached, %d not reached, %d no evidence, "
              "%d undecided" % (name, *(tally[v] for v in VERDICTS)))
    print("coverage: error returns judged by: " +
          ", ".join(f"{k} {rules[k]}" for k in sorted(rules)))
    with open(unreached_out, "w") as f:
        f.write("# Functions no test reached, called or inlined "
                "(file:line name)\n")
        f.writelines(x + "\n" for x in dead_funcs)
        for verdict, title in (
                (NOT_REACHED, "no test reached (a counter of their own "
                              "block is 0)"),
                (NO_EVIDENCE, "with no evidence that a test reached them "
                              "(their guard's counters say it never led "
                              "there; a jump gcc threaded past the guard "
                              "would not show)"),
                (None, "the counters cannot judge")):
            f.write(f"\n# Error returns {title}: file:line function: "
                    "code [rule]\n")
            f.writelines(x + "\n" for x in listed[verdict])
    return 0


if __name__ == "__main__":
    sys.exit(main())
