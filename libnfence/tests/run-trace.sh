#!/bin/sh
# SPDX-License-Identifier: MIT
#
# run-trace.sh NFENCE_TRACE CHECKER: nfence-trace convert on the capture
# recorded in a VM (tests/data/nfence-trace-sample.txt: two
# "nfence-pipeline-demo --logged", nfence-fence-demo, nfence-doorbell-demo
# and nfence_log@wait-entry-blocked under "nfence-trace record"), checked
# by the trace-event checker (scripts/nfence-trace-check.py) with the
# exact counts of that capture; the timeline rendered to PNG
# (scripts/nfence-trace-plot.py); the hand-made capture of zero and
# repeated log entry timestamps (tests/data/nfence-trace-zero-ts.txt, the
# WDDM, 15.5), checked slice by slice and flow by flow; then malformed
# captures, each of which must fail with exit status 1, a "file:line:"
# message and no JSON left (trace-cmd data files with a broken header
# too); then JSON the checker must refuse. Prints
# "ok ..." lines, or "not ok" and exits 1.
set -u

trace=$1
checker=$2
data=$(dirname "$0")/data/nfence-trace-sample.txt
zero=$(dirname "$0")/data/nfence-trace-zero-ts.txt
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail=0

ok() { echo "ok - $1"; }
notok() { echo "not ok - $1"; fail=1; }

# The sample: 1 adapter; tracks: interrupts, the CMP's fence signals, 22
# queues (17 seen only in doorbell rings), 7 tasks; slices: 2 WORKs,
# 3 GPU waits, 6 logged signals, 7 blocking CPU waits; the two
# pipeline demos' engine-to-engine releases are the 2 flows, each from
# its own pipeline's signal (both pipelines' fences are fence 3).
pipeline1="name=signal fence 3,track=engine 0 queue 1 ->"
pipeline1="$pipeline1 name=wait fence 3,track=engine 1 queue 2"
pipeline2="name=signal fence 3,track=engine 0 queue 3 ->"
pipeline2="$pipeline2 name=wait fence 3,track=engine 1 queue 4"
if "$trace" convert "$data" -o "$dir/sample.json" 2>"$dir/err" &&
   python3 "$checker" --tracks 31 --slices 18 --flows 2 \
	--track interrupts --track "engine 0 queue 1" \
	--track "engine 1 queue 2" --track "nfence-pipeline-300" \
	--process "nfence adapter 0 (GPU)" \
	--flow-link "$pipeline1" --flow-link "$pipeline2" \
	"$dir/sample.json" >"$dir/out"; then
	ok "$(cat "$dir/out")"
else
	cat "$dir/err" "$dir/out" | sed -e 's/^/# /'
	notok "sample capture converts and checks"
fi

# Zero and repeated timestamps (the file's top comment has its timeline;
# x us after 20 s is ts 20000000+x): nothing placed before the first
# event (the CPU wait's begin, 20.000000) or after the last (its end); a
# zero gpu_ts at its entry's event time with "time": "trace", and no
# base from it (adapter 1 needs no frequency); a wait with observed_ts=0
# or gpu_ts=0 drawn with no length at its end, with "start": "unknown";
# equal ticks kept in the capture's order and matched: a wait released at
# its signal's tick, two signals of fence 5 at one tick (value 1 first in
# the capture releases the wait for 1, value 2 the wait for 2); the wait
# for fence 6 value 1 from the signal at 105, the tick it was observed,
# not from the zero-timestamp one of value 2 at 150; the wait for fence 8, released at 145 before the
# zero-timestamp signal's event, and the wait for fence 3 that blocked
# from 110, after the only logged signal of fence 3 (at 60), with no flow
# ("2 GPU waits with no logged signal").
q1="track=engine 0 queue 1"
q2="track=engine 1 queue 2"
q3="track=engine 2 queue 3"
q4="track=engine 3 queue 4"
est="args.gpu_ts=0,args.time=trace"	# a zero gpu_ts, placed at its event
unk="args.start=unknown"		# a wait drawn from its end
a1="process=nfence adapter 1 (GPU)"
summary=" 2 adapters, 10 tracks, 22 slices, 13 instants, 0 async waits,"
summary="$summary 7 flows (2 GPU waits with no logged signal)"
bases='"index":0,"timestamp_frequency":100000000,'
bases="$bases"'"timestamp_base_ns":15000000000},{"index":1,'
bases="$bases"'"timestamp_frequency":0,"timestamp_base_ns":null}'
: >"$dir/out"
if "$trace" convert "$zero" -o "$dir/zero.json" 2>"$dir/err" &&
   grep -qF "$summary" "$dir/err" && grep -qF "$bases" "$dir/zero.json" &&
   python3 "$checker" --tracks 10 --slices 22 --flows 7 \
	--min-ts 20000000 --max-ts 20000185 \
	--slice "name=work,$q1,ts=20000010,dur=50,args.time=" \
	--slice "name=signal fence 3,$q1,ts=20000060,dur=0,args.time=" \
	--slice "name=signal fence 4,$q1,ts=20000060,dur=0,args.time=" \
	--slice "name=wait fence 3,$q2,ts=20000020,dur=40,args.start=" \
	--slice "name=wait fence 3,$q4,ts=20000110,dur=30,args.start=" \
	--slice "name=wait fence 4,$q2,ts=20000070,dur=0,args.observed_ts=0,$unk,args.time=" \
	--slice "name=wait fence 6,$q2,args.value=1,ts=20000105,dur=25" \
	--slice "name=signal fence 6,$q3,ts=20000105,dur=0" \
	--slice "name=signal fence 6,$q1,ts=20000150,dur=0,$est" \
	--slice "name=signal fence 8,$q1,ts=20000155,dur=0,$est" \
	--slice "name=wait fence 8,$q3,ts=20000125,dur=20,args.start=" \
	--slice "name=wait fence 7,$q3,ts=20000175,dur=0,$est,$unk" \
	--slice "name=signal fence 2,$a1,ts=20000177,dur=0,$est" \
	--flow-link "name=signal fence 3 -> name=wait fence 3,$q2" \
	--no-flow "name=wait fence 3,$q4" \
	--flow-link "name=signal fence 4 -> name=wait fence 4" \
	--flow-link "name=signal fence 5,$q3 -> name=wait fence 5,$q2" \
	--flow-link "name=signal fence 5,$q1 -> name=wait fence 5,$q4" \
	--flow-link "name=signal fence 6,$q3 -> name=wait fence 6,args.value=1" \
	--flow-link "name=signal fence 6,$q1 -> name=wait fence 6,args.value=2" \
	--flow-link "name=signal fence 7 -> name=wait fence 7" \
	--no-flow "name=signal fence 8" --no-flow "name=wait fence 8" \
	--no-flow "name=signal fence 9" --no-flow "name=signal fence 2" \
	"$dir/zero.json" >"$dir/out" &&
   [ "$(grep -o '"name":"signal fence [34]"' "$dir/zero.json" | tr -d '\n')" = \
	'"name":"signal fence 3""name":"signal fence 4"' ]; then
	ok "zero and repeated timestamps: $(cat "$dir/out")"
else
	cat "$dir/err" "$dir/out" | sed -e 's/^/# /'
	notok "zero and repeated timestamps convert and check"
fi

# libnfence's queued commands (nfence-trace-queued.txt, its top comment
# says how it was recorded): three pipeline demos, the second unlogged;
# the logged two (pids 303 and 305) queue the same three commands under
# the same kernel handles (wait 3, signal 4, signal 3, value 1), each
# joined to its own run's log entry (303: queues 1 and 2, 305: queues 5
# and 6), first queued first logged, from the task to the adapter,
# forward in time; the unlogged run queued nothing.
queued=$(dirname "$0")/data/nfence-trace-queued.txt
w="name=fence wait queued (handle 0xc00002c0),args.kernel_handle=3"
sa="name=fence signal queued (handle 0xc00002c0),args.kernel_handle=3"
sb="name=fence signal queued (handle 0xc0000300),args.kernel_handle=4"
summary="8 flows (0 GPU waits with no logged signal), 6 queued commands"
summary="$summary (6 with their log entry)"
if "$trace" convert "$queued" -o "$dir/queued.json" 2>"$dir/err" &&
   grep -qF "$summary" "$dir/err" &&
   python3 "$checker" --tracks 10 --slices 21 --flows 8 \
	--cat-flows nfence.flow=2 --cat-flows nfence.queued=6 \
	--cross-flows nfence.queued \
	--flow-link "$w,track=nfence-pipeline-303 -> name=wait fence 3,track=engine 1 queue 2" \
	--flow-link "$sb,track=nfence-pipeline-303 -> name=signal fence 4,track=engine 1 queue 2" \
	--flow-link "$sa,track=nfence-pipeline-303 -> name=signal fence 3,track=engine 0 queue 1" \
	--flow-link "$w,track=nfence-pipeline-305 -> name=wait fence 3,track=engine 1 queue 6" \
	--flow-link "$sb,track=nfence-pipeline-305 -> name=signal fence 4,track=engine 1 queue 6" \
	--flow-link "$sa,track=nfence-pipeline-305 -> name=signal fence 3,track=engine 0 queue 5" \
	"$dir/queued.json" >"$dir/out" &&
   ! grep -q '"logged":false' "$dir/queued.json"; then
	ok "queued commands: $(cat "$dir/out")"
else
	cat "$dir/err" "$dir/out" | sed -e 's/^/# /'
	notok "queued commands convert, each joined to its own log entry"
fi
# Without the log entry of 303's signal of fence 4, first queued first
# logged joins 303's queued signal to 305's entry (forward in time, the
# limit tracing.rst describes: the probes name no process or queue), and
# 305's stays unjoined, with "logged": false and no flow.
grep -v 'log=signals fence=4 handle=0x4 value=1 observed_ts=0 gpu_ts=325213320' \
	"$queued" >"$dir/nolog.txt"
if "$trace" convert "$dir/nolog.txt" -o "$dir/nolog.json" 2>"$dir/err" &&
   grep -qF "6 queued commands (5 with their log entry)" "$dir/err" &&
   python3 "$checker" --cat-flows nfence.queued=5 \
	--flow-link "$sb,track=nfence-pipeline-303 -> name=signal fence 4,track=engine 1 queue 6" \
	--no-flow "$sb,track=nfence-pipeline-305,args.logged=false" \
	"$dir/nolog.json" >"$dir/out"; then
	ok "a queued command without its entry: $(cat "$dir/out")"
else
	cat "$dir/err" "$dir/out" | sed -e 's/^/# /'
	notok "a queued command without its entry stays unjoined"
fi

# The timeline picture (Debian's python3-matplotlib): a PNG with a row
# per track and the two flows.
plot=$(dirname "$checker")/nfence-trace-plot.py
if "$plot" "$dir/sample.json" "$dir/sample.png" >"$dir/out" 2>&1 &&
   grep -q "31 tracks, 2 flows" "$dir/out" &&
   [ "$(head -c 8 "$dir/sample.png" | od -An -tx1 | tr -d ' ')" = \
	"89504e470d0a1a0a" ]; then
	ok "$(cat "$dir/out")"
else
	sed -e 's/^/# /' "$dir/out"
	notok "nfence-trace-plot.py renders the sample"
fi

# The same from standard input, to standard output, is the same JSON but
# for the capture's name.
if "$trace" convert - <"$data" 2>/dev/null |
	sed -e 's/"capture":"[^"]*"//' >"$dir/stdin.json" &&
   sed -e 's/"capture":"[^"]*"//' "$dir/sample.json" | cmp -s - "$dir/stdin.json"
then
	ok "convert - gives the same JSON"
else
	notok "convert - gives the same JSON"
fi

# Without its header the capture needs --frequency.
grep -v '^# nfence-trace' "$data" >"$dir/noheader.txt"
if "$trace" convert "$dir/noheader.txt" -o "$dir/x.json" 2>"$dir/err"; then
	notok "a capture without frequency converts without --frequency"
elif grep -q "frequency" "$dir/err" && [ ! -e "$dir/x.json" ]; then
	ok "no frequency: $(cat "$dir/err")"
else
	notok "no frequency: wrong message or JSON left behind"
fi
if "$trace" convert --frequency 100000000 "$dir/noheader.txt" \
	-o "$dir/x.json" 2>/dev/null &&
   sed -e 's/"capture":"[^"]*"//' "$dir/x.json" | cmp -s - "$dir/stdin.json"
then
	ok "--frequency 100000000 without the header gives the same JSON"
else
	notok "--frequency 100000000 without the header gives the same JSON"
fi

# Malformed captures: exit status 1 (not a crash), a message naming the
# file and line, no JSON.
malformed() { # name file
	"$trace" convert "$2" -o "$dir/bad.json" 2>"$dir/err"
	rc=$?
	if [ "$rc" -eq 1 ] && grep -q "^nfence-trace: $2" "$dir/err" &&
	   [ ! -e "$dir/bad.json" ]; then
		ok "$1 refused: $(head -n 1 "$dir/err")"
	else
		cat "$dir/err" | sed -e 's/^/# /'
		notok "$1 (exit $rc)"
	fi
}
sed -e '40s/value=1 /value=x1 /' "$data" >"$dir/badvalue.txt"
sed -n 40p "$data" | grep -q 'value=1 ' || notok "line 40 of the sample changed"
malformed "a non-number field" "$dir/badvalue.txt"
n=$(grep -n -m 1 'nfence_log_entry' "$data" | cut -d: -f1)
head -n "$((n - 1))" "$data" >"$dir/truncated.txt"
sed -n "${n}p" "$data" | sed -e 's/log=.*/log=sig/' >>"$dir/truncated.txt"
malformed "a capture cut mid-line" "$dir/truncated.txt"
n=$(grep -n -m 1 'from=gpu' "$data" | cut -d: -f1)
sed -e "${n}s/from=gpu/from=elsewhere/" "$data" >"$dir/badword.txt"
malformed "an unknown word value" "$dir/badword.txt"
sed -e '50s/adapter=0/adapter=4294967296/' "$data" >"$dir/range.txt"
malformed "an out of range adapter" "$dir/range.txt"
sed -e '50s/\[00\([01]\)\]/CPU\1/' "$data" >"$dir/shape.txt"
malformed "an event line without its CPU column" "$dir/shape.txt"
printf '# tracer: nop\n  sh-1 [000] ..... 1.000000: sched_switch: x\n' \
	>"$dir/none.txt"
malformed "a capture with no nfence event" "$dir/none.txt"
head -c 3000 "$data" >"$dir/binary.txt"
printf 'x\000y\n' >>"$dir/binary.txt"
malformed "a NUL byte" "$dir/binary.txt"
malformed "an empty file" /dev/null
# Timestamps never go backwards: a wait observed after its release (both
# nonzero) is refused; with either 0 it is not (the zero capture).
sed -e 's/observed_ts=500002000 gpu_ts=500006000/observed_ts=500006100 gpu_ts=500006000/' \
	"$zero" >"$dir/backwards.txt"
cmp -s "$zero" "$dir/backwards.txt" && notok "the zero capture changed"
malformed "a wait observed after its release" "$dir/backwards.txt"
sed -e '0,/ kernel_handle=3 /s// kernel_hand=3 /' "$queued" >"$dir/noarg.txt"
malformed "a queued event without its kernel_handle" "$dir/noarg.txt"
# A file that starts as trace-cmd's data files do goes to libtracecmd,
# which must refuse the rest (here: a text capture behind the magic).
printf '\027\010\104tracing6\000' >"$dir/bad.dat"
cat "$data" >>"$dir/bad.dat"
malformed "a trace-cmd data file with a broken header" "$dir/bad.dat"
printf '\027\010\104tracing' >"$dir/magic.dat"
malformed "a trace-cmd data file cut after its magic" "$dir/magic.dat"
# ... and it was libtracecmd that refused them, not the text parser.
for f in bad magic; do
	"$trace" convert "$dir/$f.dat" -o "$dir/bad.json" 2>"$dir/err"
	if grep -q "not a trace-cmd data file" "$dir/err"; then
		ok "$f.dat read as a trace-cmd data file"
	else
		sed -e 's/^/# /' "$dir/err"
		notok "$f.dat read as a trace-cmd data file"
	fi
done

# A capture read from a FIFO (not a regular file: never taken for a
# trace-cmd data file, nothing of it consumed by that look) converts as the
# file does: the same JSON and the same summary.
mkfifo "$dir/fifo"
cat "$data" >"$dir/fifo" &
"$trace" convert "$dir/fifo" -o "$dir/fifo.json" 2>"$dir/fifo.err"
rc=$?
wait
"$trace" convert "$data" -o "$dir/file.json" 2>"$dir/file.err"
# (The JSON names its capture: that name aside.)
if [ "$rc" -eq 0 ] &&
   [ "$(sed -e 's/"capture":"[^"]*"//' "$dir/fifo.json")" = \
     "$(sed -e 's/"capture":"[^"]*"//' "$dir/file.json")" ] &&
   [ "$(sed -e 's/^[^:]*: [^:]*: //' -e 's/ -> .*//' "$dir/fifo.err")" = \
     "$(sed -e 's/^[^:]*: [^:]*: //' -e 's/ -> .*//' "$dir/file.err")" ]; then
	ok "a capture through a FIFO converts as the file does"
else
	cat "$dir/fifo.err" "$dir/file.err" | sed -e 's/^/# /'
	notok "a capture through a FIFO converts as the file does (exit $rc)"
fi

# Unknown events and lines are skipped, not refused.
{
	cat "$data"
	echo "  sh-1     (      1) [000] .....    99.000000: nfence_future_event: adapter=0 x=1"
	echo "  sh-1     (      1) [000] .....    99.000000: sched_switch: prev=sh"
	echo "some text"
} >"$dir/extra.txt"
if "$trace" convert "$dir/extra.txt" -o "$dir/extra.json" 2>"$dir/err" &&
   grep -q "3 lines ignored" "$dir/err"; then
	ok "unknown events and lines skipped: 3 lines ignored"
else
	cat "$dir/err" | sed -e 's/^/# /'
	notok "unknown events and lines skipped"
fi

# The checker refuses JSON that breaks the rules.
refused() { # name file [checker options]
	what=$1 f=$2
	shift 2
	if python3 "$checker" "$@" "$f" >"$dir/out"; then
		notok "checker accepted $what"
	else
		ok "checker refuses $what: $(head -n 1 "$dir/out")"
	fi
}
grep -v '"ph":"f"' "$dir/sample.json" >"$dir/nof.json"
refused "a flow start without its finish" "$dir/nof.json"
sed -e '0,/"dur":0,/s//"dur":-1,/' "$dir/sample.json" >"$dir/neg.json"
refused "a negative dur" "$dir/neg.json"
grep -v '"name":"engine 1 queue 2"' "$dir/sample.json" >"$dir/noname.json"
refused "a track without thread_name" "$dir/noname.json"
python3 - "$dir/sample.json" "$dir/overlap.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
x = next(e for e in doc["traceEvents"] if e["ph"] == "X" and e["dur"] > 0)
doc["traceEvents"].append(dict(x, name="overlap", ts=x["ts"] + x["dur"] / 2))
json.dump(doc, open(sys.argv[2], "w"))
PY
refused "overlapping slices on a track" "$dir/overlap.json"
sed -e '0,/"dur":0,/s//"dur":NaN,/' "$dir/sample.json" >"$dir/nan.json"
refused "NaN" "$dir/nan.json"
refused "a wrong flow count" "$dir/sample.json" --flows 3
refused "a flow from the wrong signal" "$dir/zero.json" \
	--flow-link "name=signal fence 5,$q1 -> name=wait fence 5,$q2"
refused "an arg that must be absent" "$dir/zero.json" \
	--slice "name=wait fence 4,args.start="
refused "a slice spec matching two slices" "$dir/zero.json" \
	--slice "name=signal fence 5"
refused "a flow where there is none" "$dir/zero.json" \
	--no-flow "name=wait fence 6,args.value=1"
refused "an event before --min-ts" "$dir/zero.json" --min-ts 20000011
refused "an event ending after --max-ts" "$dir/zero.json" --max-ts 20000184
refused "a wrong count of queued flows" "$dir/queued.json" \
	--cat-flows nfence.queued=5
refused "engine-to-engine flows as CPU-to-GPU ones" "$dir/queued.json" \
	--cross-flows nfence.flow
python3 - "$dir/queued.json" "$dir/still.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
evs = doc["traceEvents"]
s = next(e for e in evs if e["ph"] == "s" and e["cat"] == "nfence.queued")
f = next(e for e in evs if e["ph"] == "f" and e["id"] == s["id"] and
         e["cat"] == s["cat"])
x = next(e for e in evs if e["ph"] == "X" and e["ts"] == s["ts"] and
         (e["pid"], e["tid"]) == (s["pid"], s["tid"]))
x["ts"] = s["ts"] = f["ts"]   # queued at the very time it was logged
json.dump(doc, open(sys.argv[2], "w"))
PY
refused "a queued flow that does not go forward" "$dir/still.json" \
	--cross-flows nfence.queued

if [ "$fail" -ne 0 ]; then
	echo "not ok nfence-trace"
	exit 1
fi
echo "ok nfence-trace"
