-- SPDX-License-Identifier: MIT
-- schemas/catalog.sql - the library of traces (DATA/catalog.db), version 1.
-- Migrations live in store/st-catalog.c: each step N -> N+1 is one SQL
-- script run in a transaction, and PRAGMA user_version records the result.

CREATE TABLE traces (
	id          TEXT PRIMARY KEY,          -- 16 hex chars, generated
	name        TEXT NOT NULL,
	tags        TEXT NOT NULL DEFAULT '',  -- comma-separated
	status      TEXT NOT NULL,             -- queued | ingesting | ready | failed
	progress    REAL NOT NULL DEFAULT 0,   -- 0..1 while ingesting
	error       TEXT,                      -- failure reason
	format      TEXT,                      -- json | perfetto | ntff
	sha256      TEXT NOT NULL,             -- raw file, DATA/raw/<sha256>
	size        INTEGER NOT NULL,          -- raw bytes
	created_ns  INTEGER NOT NULL,
	updated_ns  INTEGER NOT NULL,
	stats       TEXT                       -- JSON, the fields ingest --json prints
) WITHOUT ROWID;

CREATE INDEX traces_status ON traces(status);
CREATE INDEX traces_sha ON traces(sha256);
