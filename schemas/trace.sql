-- SPDX-License-Identifier: MIT
-- schemas/trace.sql - one finished trace (DATA/traces/<id>.db), version 7.
-- PRAGMA user_version holds the version; see docs/architecture.md for the
-- migration story (a newer binary re-ingests from DATA/raw when a trace's
-- version is older than it can read).
--
-- Times are integer nanoseconds.  Event ids are dense and sorted by
-- (unit, ts, dur DESC, seq): one unit's events are one contiguous id range.

CREATE TABLE meta (
	key   TEXT PRIMARY KEY,
	value TEXT
) WITHOUT ROWID;

-- Interned names and categories.  id 0 is never used ("none").
CREATE TABLE strings (
	id INTEGER PRIMARY KEY,
	s  TEXT NOT NULL
);

-- A GPU, a NeuronCore, a host process, ...  kind: enum st_device_kind.
CREATE TABLE devices (
	id    INTEGER PRIMARY KEY,
	key   TEXT NOT NULL UNIQUE,
	kind  INTEGER NOT NULL,
	name  TEXT NOT NULL,
	label TEXT,
	sort  INTEGER
);

-- One timeline row: an engine, DMA queue, stream, thread, async track or
-- counter.  kind: enum st_unit_kind.  first_event..last_event is the unit's
-- id range in events; max_depth the deepest nesting level.
CREATE TABLE units (
	id          INTEGER PRIMARY KEY,
	device_id   INTEGER NOT NULL REFERENCES devices(id),
	key         TEXT NOT NULL,
	kind        INTEGER NOT NULL,
	name        TEXT NOT NULL,
	sort        INTEGER,
	event_count INTEGER NOT NULL DEFAULT 0,
	first_event INTEGER,
	last_event  INTEGER,
	max_depth   INTEGER NOT NULL DEFAULT 0,
	overlaps    INTEGER NOT NULL DEFAULT 0,
	UNIQUE (device_id, key)
);

-- Per (unit, depth): the longest duration, so that a window query can start
-- its index scan at ts >= start - max_dur and still see long slices.
CREATE TABLE unit_depths (
	unit_id INTEGER NOT NULL,
	depth   INTEGER NOT NULL,
	count   INTEGER NOT NULL,
	max_dur INTEGER NOT NULL,
	PRIMARY KEY (unit_id, depth)
) WITHOUT ROWID;

-- Events are packed, not one row each: a unit's events (in id order) are
-- cut into chunks of at most 256 that never span two units.  event_chunks is
-- the small directory a query reads to skip chunks; event_data holds the
-- packed columns (encoding: store/st-chunk.h and docs/architecture.md).
-- Every connection that opens a trace through neuron-explorer also sees a
-- read-only virtual table `events` over them (store/st-vtab.c) with the
-- columns id, unit, ts, dur, kind, depth, name, cat, value, seq, flags, args
-- and ts_end (= ts + dur); `neuron-explorer sql` runs queries against it.
-- kind: enum st_event_kind.  seq: position in the input file (1-based).
-- args: JSON object text or NULL.  value: counter samples.
-- flags: bit 0 = carries access sets / semaphores (see docs/dependencies.md).
CREATE TABLE event_chunks (
	id        INTEGER PRIMARY KEY,	-- id of the chunk's first event
	unit      INTEGER NOT NULL,
	count     INTEGER NOT NULL,
	ts_first  INTEGER NOT NULL,
	ts_last   INTEGER NOT NULL,
	end_max   INTEGER NOT NULL,	-- latest ts + dur in the chunk
	min_depth INTEGER NOT NULL,
	max_depth INTEGER NOT NULL,
	names     BLOB NOT NULL		-- 256-bit Bloom filter of the name ids
);

CREATE TABLE event_data (
	id   INTEGER PRIMARY KEY,	-- = event_chunks.id
	cols BLOB NOT NULL,
	args BLOB
);

-- event_chunks' rows again, packed for the events table, which reads the
-- whole directory once per connection (a copy instead of a row at a time
-- through SQL): part k holds rows k * 65536 on, in id order, 80 bytes each
-- (layout: store/st-chunk.h).  Written once the last chunk is in; a store
-- without it (older) is read from event_chunks.
CREATE TABLE event_dir (
	id   INTEGER PRIMARY KEY,	-- part number, from 0
	rows BLOB NOT NULL
);

-- Dependency edges are packed too, not one row each (encoding:
-- store/st-edges.h and docs/dependencies.md).  Event ids are cut into
-- blocks of 128 (256 before version 11): edge_blocks row b holds the edges
-- into events 128b..128b+127 (ins, sorted by dst) and edge_outs row b the
-- edges out of them (outs, sorted by src), each blob led by an index of its
-- 32 groups of 4 events (version 4).  edge_crit row b holds, for each of those events,
-- the edge in whose source ends last (version 5: the critical path follows
-- it; version 6: with how much earlier than the event its source ends;
-- version 7: and the next source).  A table each since version 9 (crit
-- since 8): in one row, reading outs or crit read the pages of the blobs
-- before them.
-- A block has a row in a table only when it has such edges.
-- Labels are ids into edge_labels, whose row g holds the
-- texts of labels 256g..256g+255.  Every connection that opens a trace
-- through neuron-explorer sees them as the read-only virtual table `edges`
-- (store/st-edges.c) with the columns src, dst, kind and label, looked up by
-- src = ? or dst = ?.  kind: enum st_edge_kind.  label: flow name/id, buffer
-- bytes or semaphore condition that caused it.
CREATE TABLE edge_blocks (
	id   INTEGER PRIMARY KEY,	-- block: event ids 128 * id .. 128 * id + 127
	ins  BLOB NOT NULL
);

CREATE TABLE edge_outs (
	id   INTEGER PRIMARY KEY,	-- the same blocks
	outs BLOB NOT NULL
);

CREATE TABLE edge_crit (
	id   INTEGER PRIMARY KEY,	-- the edge_blocks row it belongs to
	crit BLOB NOT NULL
);

CREATE TABLE edge_labels (
	id    INTEGER PRIMARY KEY,	-- label ids 256 * id .. 256 * id + 255
	texts BLOB NOT NULL
);

-- Per-unit summary mipmap.  Level L buckets are (bucket_ns << L) wide,
-- bucket_ns and origin in meta; bucket b covers
-- [origin + b*(bucket_ns<<L), origin + (b+1)*(bucket_ns<<L)).
-- count: events that start in the bucket (all depths), busy: ns covered by
-- depth-0 slices, dom_name/dom_ns: the name with the most depth-0 time,
-- vmin/vmax/vlast: counter values.  Only non-empty buckets are stored.
-- A unit's lowest stored level follows its density (about 32 of its events
-- per bucket, store/st-finish.c); a reader asking for a finer level uses
-- the unit's lowest one.
CREATE TABLE summaries (
	unit_id  INTEGER NOT NULL,
	level    INTEGER NOT NULL,
	bucket   INTEGER NOT NULL,
	count    INTEGER NOT NULL,
	busy     INTEGER NOT NULL,
	dom_name INTEGER NOT NULL,
	dom_ns   INTEGER NOT NULL,
	vmin     REAL,
	vmax     REAL,
	vlast    REAL,
	PRIMARY KEY (unit_id, level, bucket)
) WITHOUT ROWID;
