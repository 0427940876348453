#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/perfetto/golden.sh - the Perfetto traces in ../shared/traces through
# the real binary: the upstream difftest fixtures must give exactly the
# slices, counters and flow pairs of Perfetto's own expected output (see
# SOURCES.md and perfetto's diff_tests track_event/tests.py), the Chrome
# trace the packet and event counts SOURCES.md lists and a span of seconds,
# the Android system trace its single "Hello Trace" instant.
. "${NX_SRCDIR:-$(dirname "$0")/../..}/tests/lib.sh"
need_shared

# load FILE: ingest, set $db to its SQLite file
load() {
	"$NX" ingest --data "$T/d" --json "$SHARED/$1" >"$T/got.json" 2>"$T/err.txt"
	ok $? "$1: ingest exits 0"
	sed 's/^/#   /' "$T/err.txt"
	db="$T/d/traces/$(jget "$T/got.json" "j['id']").db"
}
# sq SQL: rows of SQL (events is a virtual table: `neuron-explorer sql`), ';'-terminated
sq() { "$NX" sql "$db" "$1" | tr '\n' ';'; }

# --- flow_events_track_event: the 8 flow pairs (slice_out -> slice_in)
load perfetto_difftest_flow_events_track_event.pb
is "$(sq "SELECT s1.s, s2.s FROM edges e JOIN events a ON a.id = e.src JOIN events b ON b.id = e.dst
	JOIN strings s1 ON s1.id = a.name JOIN strings s2 ON s2.id = b.name WHERE e.kind = 0
	ORDER BY 1, 2")" \
"FlowSlice1Start|FlowSlice1End;\
FlowSlice1Start2Start|FlowSlice1End;\
FlowSlice1Start2Start|FlowSlice2End;\
FlowSlice3Begin|FlowSlice3End4Begin;\
FlowSlice3End4Begin|FlowSlice4Step;\
FlowSlice4Step|FlowSlice4Step2_FlowIdOnAsyncEndEvent;\
FlowSlice4Step2_FlowIdOnAsyncEndEvent|FlowSlice4Step2_FlowIdOnEndEvent;\
FlowSlice4Step2_FlowIdOnEndEvent|FlowSlice4End;" "flow_events: exactly the 8 upstream flow pairs"

# --- track_event_counters: 7 slices (instants are dur 0 slices upstream)
load perfetto_difftest_track_event_counters.pb
is "$(sq "SELECT e.ts, e.dur, n.s, u.name, d.name FROM events e JOIN strings n ON n.id = e.name
	JOIN units u ON u.id = e.unit JOIN devices d ON d.id = u.device_id WHERE e.kind IN (0, 1)
	ORDER BY e.ts, n.s")" \
"1000|100|event1_on_t1|t1|Browser;\
2000|200|event2_on_t1|t1|Browser;\
2000|200|event3_on_t1|t1|Browser;\
4000|100|event1_on_t3|t4|Browser;\
4000|0|event4_on_t1|t1|Browser;\
4300|0|float_counter_on_t1|t1|Browser;\
4500|0|float_counter_on_t1|t1|Browser;" "track_event_counters: the 7 upstream slices on their threads"
is "$(sq "SELECT e.ts, e.value FROM events e JOIN units u ON u.id = e.unit
	WHERE e.kind = 2 AND u.name = 'MySizeCounter' ORDER BY e.ts")" \
   "3000|1024.0;3100|2048.0;4000|1024.0;4500|4096.0;" \
   "MySizeCounter: 1024@3000, 2048@3100, 1024@4000 (and 4096@4500, as upstream)"
is "$(sq "SELECT e.ts, e.value FROM events e JOIN units u ON u.id = e.unit
	WHERE e.kind = 2 AND u.name = 'thread_time' ORDER BY e.ts, e.value")" \
   "1000|1000000.0;1100|1010000.0;2000|2000000.0;2000|2010000.0;2200|2020000.0;2200|2030000.0;4000|10000.0;4000|2040000.0;4100|15000.0;" \
   "thread_time: t1's incremental counter (deltas summed, reset on clear, x unit_multiplier) and t4's legacy thread_time_absolute_us"
is "$(sq "SELECT e.ts, e.value FROM events e JOIN units u ON u.id = e.unit
	WHERE e.kind = 2 AND u.name = 'thread_instruction_count' ORDER BY e.ts")" \
   "4000|20.0;4100|25.0;" "legacy thread_instruction_count_absolute on t4"
is "$("$NX" sql "$db" "SELECT count(*) FROM events WHERE kind = 2")" 18 \
   "track_event_counters: the 18 counter rows of upstream's expected output"
is "$(sq "SELECT e.ts, e.value FROM events e JOIN units u ON u.id = e.unit
	WHERE e.kind = 2 AND u.name = 'MyDoubleCounter' ORDER BY e.ts")" \
   "4200|3.1415926;4300|0.5;4500|2.71828;" "double counters, extra and default track lists"

# --- Chrome, gzip'd despite the name: counts from SOURCES.md
load mspt_chrome_gzipped.pftrace
stats=$(sqlite3 "$db" "SELECT value FROM meta WHERE key = 'perfetto_stats'")
echo "$stats" >"$T/stats.json"
is "$(jget "$T/stats.json" "j['packets']")" 293610 "chrome: 293,610 packets"
is "$(jget "$T/stats.json" "j['track_events']['slice_begin']")" 142164 "chrome: 142,164 SLICE_BEGIN"
is "$(jget "$T/stats.json" "j['track_events']['slice_end']")" 142091 "chrome: 142,091 SLICE_END"
is "$(jget "$T/stats.json" "j['track_events']['instant']")" 3969 "chrome: 3,969 INSTANT"
# every typed begin is a stored slice; the rest are legacy async b and S
is "$(jget "$T/got.json" "j['slices']")" \
   "$(jget "$T/stats.json" "j['track_events']['slice_begin'] + j['legacy_phases']['b'] + j['legacy_phases']['S']")" \
   "chrome: stored slices = begins + legacy async begins"
is "$(jget "$T/got.json" "j['instants']")" \
   "$(jget "$T/stats.json" "j['track_events']['instant'] + j['legacy_phases']['n'] + j['legacy_phases']['T'] + j['legacy_phases']['R']")" \
   "chrome: stored instants = INSTANT + legacy n/T/R"
flows=$(jget "$T/got.json" "j['flows']['flow']")
[ "$flows" -gt 10000 ]; ok $? "chrome: legacy bind_id flows become edges ($flows)"
span=$(jget "$T/got.json" "(j['end_ns'] - j['start_ns']) / 1e9")
jget "$T/got.json" "1 if 1 < (j['end_ns'] - j['start_ns']) / 1e9 < 600 else exit(1)" >/dev/null
ok $? "chrome: time span is seconds, not hours ($span s): clock 64 µs deltas applied"
is "$(jget "$T/got.json" "j['bad_events']")" 0 "chrome: no bad events"

# --- Android system trace: ftrace skipped, one track event
load mspt_android_system.perfetto-trace
is "$(sq "SELECT e.kind, n.s FROM events e JOIN strings n ON n.id = e.name")" "1|Hello Trace;" \
   "android: exactly 1 instant \"Hello Trace\" (interned name), ftrace skipped"
is "$(jget "$T/got.json" "j['slices'] + j['counters']")" 0 "android: nothing else"
done_testing
