# SPDX-License-Identifier: MIT
# tests/deps/deps-lib.sh - helpers for the dependency tests (sourced after
# tests/lib.sh): ingest a fixture and list its edges by event name.
DD="$NX_SRCDIR/tests/data/deps"

# ingest_id FILE: ingest into $T/d, print the trace id (empty on failure).
ingest_id() {
	"$NX" ingest --data "$T/d" --json "$1" >"$T/ingest.json" 2>"$T/ingest.err" || return 1
	jget "$T/ingest.json" "j['id']"
}

# edges ID: every stored edge as "src>dst:kind:label", by event name, sorted.
edges() {
	"${PYTHON3:-python3}" - "$T/d/traces/$1.db" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
k = ["flow", "order", "anti", "output"]
rows = db.execute("""SELECT sa.s, sb.s, e.kind, e.label FROM edges e
  JOIN events a ON a.id = e.src JOIN strings sa ON sa.id = a.name
  JOIN events b ON b.id = e.dst JOIN strings sb ON sb.id = b.name""").fetchall()
print(";".join(sorted("%s>%s:%s:%s" % (r[0], r[1], k[r[2]], r[3]) for r in rows)))
PY
}

# eid ID NAME: the event id of the (first) event called NAME.
eid() {
	"${PYTHON3:-python3}" -c "
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
print(db.execute('SELECT e.id FROM events e JOIN strings s ON s.id = e.name WHERE s.s = ? ORDER BY e.id', (sys.argv[2],)).fetchone()[0])" "$T/d/traces/$1.db" "$2"
}
