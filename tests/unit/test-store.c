/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test-store.c - the trace store on a real SQLite file: nesting,
 * overlaps, edges remapped to sorted ids, summary levels, the catalog.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "store/store.h"
#include "store/library.h"
#include "store/store-int.h"
#include "tests/tap.h"
#include "tests/unit/sql-int.h"


static int64_t
add(struct st_writer *w, int unit, int kind, int64_t ts, int64_t dur, const char *name)
{
	struct st_event ev = { .unit = unit, .kind = kind, .ts = ts, .dur = dur,
			       .name = st_intern(w, name, strlen(name)) };

	return st_event_add(w, &ev);
}

int
main(void)
{
	char dir[] = "/tmp/nx-store-XXXXXX";
	struct tc_err err = { 0 };
	struct st_writer *w;
	struct st_stats st;
	sqlite3 *db;
	char *path;
	int dev, t1, t2, c;
	int64_t a, b, x, y;

	if (!mkdtemp(dir))
		tap_skip_all("mkdtemp");
	path = tc_xasprintf("%s/t.db", dir);
	ok(st_writer_open(&w, path, &err) == 0, "writer opens %s", err.msg);
	dev = st_device(w, "pid:1", ST_DEV_PROCESS, "proc");
	is_int(st_device(w, "pid:1", ST_DEV_PROCESS, NULL), dev, "device keys are stable");
	t1 = st_unit(w, dev, "tid:1", ST_UNIT_THREAD, "main");
	t2 = st_unit(w, dev, "tid:2", ST_UNIT_THREAD, "worker");
	c = st_unit(w, dev, "ctr", ST_UNIT_COUNTER, "mem");
	/* out of order on purpose: the child arrives before its parent */
	b = add(w, t1, ST_EV_SLICE, 1100, 200, "child");
	a = add(w, t1, ST_EV_SLICE, 1000, 1000, "parent");
	add(w, t1, ST_EV_SLICE, 1250, 500, "overlapper");	/* breaks nesting with child */
	add(w, t1, ST_EV_INSTANT, 1500, 0, "mark");
	x = add(w, t2, ST_EV_SLICE, 0, 10, "early");
	y = add(w, t2, ST_EV_SLICE, 5000, 10, "late");
	{
		struct st_event ev = { .unit = c, .kind = ST_EV_COUNTER, .ts = 3000, .value = 7.5,
				       .name = st_intern(w, "mem", 3) };

		st_event_add(w, &ev);
	}
	is_int(b, 1, "sequence numbers start at 1");
	ok(st_edge_add(w, a, y, ST_EDGE_FLOW, "f1") == 0, "edge added");
	ok(st_edge_add(w, x, x, ST_EDGE_FLOW, NULL) < 0, "self edge refused");
	ok(st_writer_finish(w, &st, &err) == 0, "finish: %s", err.msg);
	is_int(st.slices, 5, "slices counted");
	is_int(st.instants, 1, "instants counted");
	is_int(st.counters, 1, "counter samples counted");
	is_int(st.units, 3, "units counted");
	is_int(st.edges[ST_EDGE_FLOW], 1, "flow edges counted");
	is_int(st.overlaps, 1, "overlap counted");
	is_int(st.start_ns, 0, "start");
	is_int(st.end_ns, 5010, "end");

	ok(st_trace_open(&db, path, &err) == 0, "reopen read-only");
	is_int(q1(db, "SELECT depth FROM events e JOIN strings s ON s.id=e.name WHERE s.s='parent'"),
	       0, "parent at depth 0");
	is_int(q1(db, "SELECT depth FROM events e JOIN strings s ON s.id=e.name WHERE s.s='child'"),
	       1, "child at depth 1");
	is_int(q1(db, "SELECT depth FROM events e JOIN strings s ON s.id=e.name"
		  " WHERE s.s='overlapper'"), 2, "overlapping slice on a sub-row");
	is_int(q1(db, "SELECT count(*) FROM events e, events f WHERE e.unit=f.unit AND e.id<f.id"
		  " AND e.ts>f.ts"), 0, "ids sorted by ts within a unit");
	is_int(q1(db, "SELECT count(*) FROM edges e JOIN events a ON a.id=e.src JOIN strings s"
		  " ON s.id=a.name JOIN events b ON b.id=e.dst JOIN strings t ON t.id=b.name"
		  " WHERE s.s='parent' AND t.s='late'"), 1, "edge remapped to final ids");
	is_int(q1(db, "SELECT max_dur FROM unit_depths WHERE depth=0 AND unit_id=1"), 1000,
	       "max duration per depth");
	is_int(q1(db, "SELECT sum(count) FROM summaries s WHERE level=(SELECT min(level) FROM"
		  " summaries WHERE unit_id=s.unit_id)"), 7,
	       "each unit's lowest summary level counts every event");
	is_int(q1(db, "SELECT sum(busy) FROM summaries WHERE unit_id=1 AND level=(SELECT"
		  " min(level) FROM summaries WHERE unit_id=1)"), 1000,
	       "busy time is depth-0 time");
	is_int(q1(db, "SELECT count(*) FROM summaries s WHERE level=(SELECT max(level) FROM"
		  " summaries WHERE unit_id=s.unit_id) AND unit_id=2"), 1,
	       "top summary level is one bucket");
	is_int(q1(db, "SELECT sum(count) FROM summaries WHERE unit_id=2 AND level=(SELECT"
		  " max(level) FROM summaries WHERE unit_id=2)"), 2, "levels keep counts");
	sqlite3_close(db);

	/* a writer given up on gives its staging's memory back */
	{
		char *p3 = tc_xasprintf("%s/aborted.db", dir);
		size_t now, top;
		uint64_t filed;
		int u0, i;

		setenv("NX_STORE_RUN_KEYS", "1000", 1);
		ok(st_writer_open(&w, p3, &err) == 0, "a writer to abort opens: %s", err.msg);
		unsetenv("NX_STORE_RUN_KEYS");
		u0 = st_unit(w, st_device(w, "host", ST_DEV_PROCESS, NULL), "t", ST_UNIT_THREAD, NULL);
		for (i = 0; i < 5000; i++) {
			struct st_event ev = { .unit = u0, .kind = ST_EV_SLICE, .ts = 5000 - i,
					       .dur = 1, .name = st_intern(w, "a", 1),
					       .args = "{\"x\":1}", .args_len = 7 };

			if (st_event_add(w, &ev) < 0)
				break;
		}
		st_spill_usage(&now, &top, &filed);
		ok(now > 0, "its runs and args are staged in memory (%zu bytes)", now);
		st_writer_abort(w);
		w = NULL;
		st_spill_usage(&now, &top, &filed);
		is_int((long long)now, 0, "abort gives that memory back");
		ok(access(p3, F_OK) != 0, "and removes its file");
		free(p3);
	}

	/*
	 * The staging path at scale: 50k events in pseudo-random order with
	 * many ties (the key sort, not the already-sorted fast path), args that
	 * must follow their event through the spill files, counters, flags and
	 * edges named by sequence number.
	 */
	{
		char *p2 = tc_xasprintf("%s/big.db", dir);
		uint64_t r = 42;
		int u[5], i, nargs = 0, nflags = 0, nneg = 0;
		const int n = 50000;

		/* small key runs: 50 sorted runs merged at finish (store/st-keys.c) */
		setenv("NX_STORE_RUN_KEYS", "1000", 1);
		ok(st_writer_open(&w, p2, &err) == 0, "second writer opens: %s", err.msg);
		unsetenv("NX_STORE_RUN_KEYS");
		dev = st_device(w, "gpu:0", ST_DEV_GPU, NULL);
		for (i = 0; i < 5; i++) {
			char k[16];

			snprintf(k, sizeof(k), "s%d", i);
			u[i] = st_unit(w, dev, k, i == 4 ? ST_UNIT_COUNTER : ST_UNIT_STREAM, NULL);
		}
		for (i = 1; i <= n; i++) {
			struct st_event ev = { 0 };
			char args[64];

			r = r * 6364136223846793005ULL + 1442695040888963407ULL;
			ev.unit = u[(r >> 33) % 5];
			ev.kind = ev.unit == u[4] ? ST_EV_COUNTER :
				  ((r >> 40) % 4 ? ST_EV_SLICE : ST_EV_INSTANT);
			/* many equal ts, a fifth of them before 0 */
			ev.ts = (int64_t)((r >> 20) % 997) * 1000 - 200000;
			nneg += ev.ts < 0;
			ev.dur = ev.kind == ST_EV_SLICE ? (int64_t)((r >> 50) % 3) * 10 : 0;
			/*
			 * whole numbers (staged as differences) and halves (as
			 * doubles), up to 2^53, few enough distinct ones that a
			 * run's entry often repeats the previous one's
			 */
			switch (i % 4) {
			case 0:
				ev.value = (double)((i * 7919) % 100003);
				break;
			case 1:
				ev.value = (double)(i % 5) - 2.5;
				break;
			case 2:
				ev.value = -(double)(i % 3) * 1099511627776.0;
				break;
			default:
				ev.value = i % 2 ? 9007199254740992.0 : -9007199254740992.0;
				break;
			}
			ev.name = st_intern(w, "k", 1);
			if (i % 3 == 0) {
				snprintf(args, sizeof(args), i % 9 == 0 ? "{\"i\":%d,\"reads\":[]}" :
					 "{\"i\":%d,\"Input Dims\":[]}", i);
				ev.args = args;
				ev.args_len = strlen(args);
				nargs++;
				nflags += i % 9 == 0;
			}
			if (st_event_add(w, &ev) != i)
				break;
		}
		is_int(i, n + 1, "50k events added with seq = file order");
		for (i = 1; i < 2000; i++) {
			char l[16];

			snprintf(l, sizeof(l), "e%d", i);
			if (st_edge_add(w, i, i + 1, ST_EDGE_FLOW, l) < 0)
				break;
		}
		ok(st_writer_finish(w, &st, &err) == 0, "finish 50k: %s", err.msg);
		{
			size_t now, top;
			uint64_t filed;

			st_spill_usage(&now, &top, &filed);
			ok(top > 0 && filed == 0, "the staging was kept in memory (%zu bytes at most)",
			   top);
			is_int((long long)now, 0, "and all of it given back at finish");
		}
		ok(st_trace_open(&db, p2, &err) == 0, "reopen 50k");
		is_int(q1(db, "SELECT count(*) FROM events"), n, "all events stored");
		is_int(q1(db, "SELECT max(id) FROM events"), n, "ids dense");
		is_int(q1(db, "SELECT count(*) FROM events a JOIN events b ON b.id = a.id + 1 WHERE"
			  " a.unit > b.unit OR (a.unit = b.unit AND (a.ts > b.ts OR (a.ts = b.ts AND"
			  " (a.dur < b.dur OR (a.dur = b.dur AND a.seq >= b.seq)))))"), 0,
		       "ids follow (unit, ts, dur DESC, seq)");
		is_int(q1(db, "SELECT count(*) FROM events WHERE args IS NOT NULL"), nargs,
		       "args kept");
		is_int(q1(db, "SELECT count(*) FROM events"), n, "every event stored once");
		is_int(q1(db, "SELECT count(*) FROM events a JOIN events b ON b.id = a.id + 1 AND"
			  " b.unit = a.unit WHERE b.ts < a.ts OR (b.ts = a.ts AND b.dur > a.dur) OR"
			  " (b.ts = a.ts AND b.dur = a.dur AND b.seq < a.seq)"), 0,
		       "merged runs give ids in (unit, ts, dur DESC, seq) order");
		is_int(q1(db, "SELECT count(DISTINCT seq) FROM events"), n, "no key lost or doubled");
		is_int(q1(db, "SELECT count(*) FROM events WHERE args IS NOT NULL AND"
			  " json_extract(args, '$.i') != seq"), 0, "args follow their event");
		is_int(q1(db, "SELECT count(*) FROM events WHERE flags = 1"), nflags,
		       "flags mark the access-set args only");
		is_int(q1(db, "SELECT count(*) FROM events WHERE kind = 2 AND value IS NOT CASE seq % 4"
			  " WHEN 0 THEN (seq * 7919) % 100003 WHEN 1 THEN seq % 5 - 2.5"
			  " WHEN 2 THEN -(seq % 3) * 1099511627776 ELSE CASE seq % 2"
			  " WHEN 1 THEN 9007199254740992 ELSE -9007199254740992 END END"), 0,
		       "counter values follow their event: whole, halves, 2^40s, +-2^53");
		is_int(q1(db, "SELECT count(DISTINCT value) FROM events WHERE kind = 2") > 1000, 1,
		       "... many distinct values among them");
		is_int(q1(db, "SELECT count(*) FROM events WHERE ts < 0"), nneg, "ts before 0 kept");
		is_int(q1(db, "SELECT count(*) FROM events WHERE kind != 2 AND value IS NOT NULL"), 0,
		       "no value on slices and instants");
		is_int(q1(db, "SELECT count(*) FROM edges"), 1999, "edges stored");
		is_int(q1(db, "SELECT count(*) FROM edges e JOIN events a ON a.id = e.src JOIN events b"
			  " ON b.id = e.dst WHERE b.seq = a.seq + 1 AND e.label = 'e' || a.seq"), 1999,
		       "edges remapped through the sort");
		is_int(q1(db, "SELECT count(*) FROM units x WHERE event_count != (SELECT count(*) FROM"
			  " events WHERE unit = x.id AND id BETWEEN x.first_event AND x.last_event)"), 0,
		       "unit id ranges hold exactly their events");
		is_int(q1(db, "SELECT sum(count) FROM summaries s WHERE level = (SELECT min(level)"
			  " FROM summaries WHERE unit_id = s.unit_id)"), n,
		       "each unit's lowest summary level counts every event");
		is_int(q1(db, "SELECT count(*) FROM summaries s WHERE level = (SELECT min(level)"
			  " FROM summaries WHERE unit_id = s.unit_id)") <= n / 8, 1,
		       "a unit's lowest level holds several events per bucket");
		sqlite3_close(db);
		free(p2);
	}

	/*
	 * The run sort's input shapes (store/st-keys.c: counting pass by unit,
	 * then a merge sort that skips ordered stretches): slices written at
	 * their end after the slices nested in them, a track written backwards,
	 * three overlapping copies of one track, and more units than the
	 * counting pass takes (the whole run sorted at once).  Runs of 1000.
	 */
	for (int shape = 0; shape < 4; shape++) {
		static const char *const what[] = { "nested slices written late",
						    "a track written backwards",
						    "overlapping copies of a track",
						    "6000 units in runs of 1000" };
		char *p3 = tc_xasprintf("%s/shape%d.db", dir, shape);
		int nunits = shape == 3 ? 6000 : 3, *uv = tc_xcalloc(nunits, sizeof(*uv)), i;
		const int n = 24000;
		uint64_t r = 7;

		setenv("NX_STORE_RUN_KEYS", "1000", 1);
		ok(st_writer_open(&w, p3, &err) == 0, "%s: writer opens: %s", what[shape], err.msg);
		unsetenv("NX_STORE_RUN_KEYS");
		dev = st_device(w, "gpu:1", ST_DEV_GPU, NULL);
		for (i = 0; i < nunits; i++) {
			char k[16];

			snprintf(k, sizeof(k), "q%d", i);
			uv[i] = st_unit(w, dev, k, ST_UNIT_STREAM, NULL);
		}
		for (i = 0; i < n; i++) {
			int64_t ts, dur = 10;
			int unit;

			r = r * 6364136223846793005ULL + 1442695040888963407ULL;
			unit = uv[(r >> 33) % nunits];
			switch (shape) {
			case 0:	/* groups of 4: three children, then their parent */
				ts = (i / 4) * 100 + (i % 4 == 3 ? 0 : 10 + (i % 4) * 20);
				dur = i % 4 == 3 ? 90 : 15;
				break;
			case 1:
				ts = (int64_t)(n - i) * 10;
				break;
			case 2:	/* the same timestamps three times over */
				ts = (int64_t)(i % (n / 3)) * 10 + (int64_t)((r >> 20) % 3);
				break;
			default:
				ts = (int64_t)((r >> 12) % 100000);
				break;
			}
			if (add(w, unit, ST_EV_SLICE, ts, dur, "s") != i + 1)
				break;
		}
		ok(i == n, "%s: events added", what[shape]);
		ok(st_writer_finish(w, &st, &err) == 0, "%s: finish: %s", what[shape], err.msg);
		ok(st_trace_open(&db, p3, &err) == 0, "%s: reopen", what[shape]);
		ok(q1(db, "SELECT count(DISTINCT seq) FROM events") == n, "%s: every event once",
		   what[shape]);
		ok(q1(db, "SELECT count(*) FROM events a JOIN events b ON b.id = a.id + 1 WHERE"
		      " a.unit > b.unit OR (a.unit = b.unit AND (a.ts > b.ts OR (a.ts = b.ts AND"
		      " (a.dur < b.dur OR (a.dur = b.dur AND a.seq >= b.seq)))))") == 0,
		   "%s: ids follow (unit, ts, dur DESC, seq)", what[shape]);
		sqlite3_close(db);
		free(uv);
		free(p3);
	}

	/* library: a bad file leaves nothing behind, a good one publishes */
	{
		struct st_library *lib;
		char id[ST_ID_LEN + 1];
		char *data = tc_xasprintf("%s/data", dir);
		char *bad = tc_xasprintf("%s/bad.bin", dir);
		FILE *f = fopen(bad, "w");

		fputs("\x01\x02garbage", f);
		fclose(f);
		ok(st_library_open(&lib, data, &err) == 0, "library opens");
		ok(st_library_add_raw(lib, bad, false, NULL, NULL, NULL, id, &err) == 0,
		   "raw file added");
		ok(st_id_valid(id), "generated id is valid");
		ok(!st_id_valid("../../etc/passwd"), "paths are not ids");
		tc_err_clear(&err);
		ok(st_library_ingest(lib, id, NULL, NULL, NULL, &err) < 0, "garbage fails to ingest");
		ok(strstr(err.msg, "not a trace") != NULL, "clear message: %s", err.msg);
		is_int(q1(st_library_catalog(lib), "SELECT count(*) FROM traces WHERE"
			  " status='failed'"), 1, "failed status recorded");
		ok(st_library_delete(lib, id, &err) == 0, "delete");
		is_int(q1(st_library_catalog(lib), "SELECT count(*) FROM traces"), 0,
		       "catalog empty after delete");
		st_library_close(lib);
		free(data);
		free(bad);
	}
	/* a spill in memory lends what its reader released, and only that */
	{
		struct st_spill sp, fsp;
		char *base = tc_xasprintf("%s/lend", dir), blk[1000];
		uint8_t *p1, *p2;
		int i;

		memset(blk, 'a', sizeof(blk));
		ok(st_spill_open(&sp, base, ".ram", ST_SPILL_RAM, &err) == 0, "spill in memory opens");
		for (i = 0; i < 100; i++)
			st_spill_write(&sp, blk, sizeof(blk));
		ok(st_spill_map(&sp) == 0 && sp.ram, "  mapped, in memory");
		ok(st_spill_lend(&sp, 16384) == NULL, "  nothing lent before the reader releases");
		st_spill_release(&sp, 40000);
		st_spill_release(&sp, 30000);	/* never back */
		p1 = st_spill_lend(&sp, 16384);
		p2 = st_spill_lend(&sp, 16384);
		ok(p1 == (uint8_t *)sp.mem && p2 == p1 + 16384, "  two pages from the start");
		ok(st_spill_lend(&sp, 16384) == NULL, "  not a third: past the 40000 bytes released");
		ok(st_spill_lent(&sp, p2 + 16383) && !st_spill_lent(&sp, p2 + 16384) &&
		   !st_spill_lent(&sp, blk), "  st_spill_lent knows the lent bytes");
		memset(p1, 0, 2 * 16384);
		ok(!memcmp(sp.map + 40000, blk, sizeof(blk)), "  writing them leaves the rest be");
		st_spill_release(&sp, UINT64_MAX);
		ok(st_spill_lend(&sp, 50000) != NULL, "  all released: up to its size");
		ok(st_spill_lend(&sp, 40000) == NULL, "  and not past it (%llu lent of %llu)",
		   (unsigned long long)sp.lent, (unsigned long long)sp.size);
		{
			size_t now0, now1, top;
			uint64_t filed;

			st_spill_usage(&now0, &top, &filed);
			st_spill_lend_end(&sp);
			st_spill_usage(&now1, &top, &filed);
			ok(now1 < now0 && sp.cap == 86016 && sp.mapsz == 86016,
			   "  the reader done: the rest leaves the share (%zu -> %zu bytes)", now0, now1);
			is_int(p1[0] + p2[16383], 0, "  the lent bytes stay");
		}
		st_spill_close(&sp);

		ok(st_spill_open(&fsp, base, ".file", 0, &err) == 0, "spill to a file opens");
		st_spill_write(&fsp, blk, sizeof(blk));
		ok(st_spill_map(&fsp) == 0, "  mapped");
		st_spill_release(&fsp, UINT64_MAX);
		ok(st_spill_lend(&fsp, 512) == NULL, "  lends nothing: its map is the file's");
		st_spill_close(&fsp);
		free(base);
	}
	{
		char *cmd = tc_xasprintf("rm -rf %s", dir);

		if (system(cmd) != 0)
			tap_diag("cleanup failed");
		free(cmd);
	}
	free(path);
	return tap_done();
}
