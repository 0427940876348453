/* SPDX-License-Identifier: MIT */
/*
 * ingest/ingest.h - trace readers.  Each reader streams one input into a
 * struct st_writer.  ing_detect() picks the reader by content, never by name.
 */
#ifndef ING_INGEST_H
#define ING_INGEST_H

#include "common/tc.h"
#include "store/store.h"

enum ing_format {
	ING_FMT_UNKNOWN = 0,
	ING_FMT_JSON,		/* Chrome Trace Event / Kineto JSON */
	ING_FMT_PERFETTO,	/* Perfetto protobuf Trace */
	ING_FMT_NTFF,		/* neuron-explorer run container */
};

const char *ing_format_name(int fmt);

/**
 * ing_detect - sniff the format from the first decompressed bytes.
 * Return: enum ing_format, ING_FMT_UNKNOWN when not a trace.
 */
int ing_detect(const unsigned char *head, size_t len);

/**
 * ing_detect_why - why ing_detect() found no format in the @len bytes of
 * @head, one line into @buf (@buflen bytes): what the bytes open like and
 * where they stop fitting.
 */
void ing_detect_why(const unsigned char *head, size_t len, char *buf, size_t buflen);

/**
 * struct ing_opts - options for one ingest.
 * @progress/@ctx: called now and then with the fraction of input consumed;
 *                a negative return stops the reader with -ECANCELED.
 * @ts_offset_ns: added to every timestamp the reader stores (the .ntff reader
 *                sets it from the manifest's per-layer clock offset).
 */
struct ing_opts {
	st_progress_fn progress;
	void *ctx;
	int64_t ts_offset_ns;
};

/**
 * ing_file - detect and read @path (gzip'd or not) into @w.
 * Return: 0, or -errno with @err naming the file, the byte offset or event
 * index, and what was wrong.  A few bad events do not fail the ingest: they
 * are skipped and counted with st_writer_count_bad().
 */
int ing_file(struct st_writer *w, const char *path, const struct ing_opts *opts,
	     struct tc_err *err);

/* The readers, for ing_file() and the tests.  Each takes an open input
 * positioned at its start. */
int ing_json_read(struct st_writer *w, struct tc_input *in, const struct ing_opts *opts,
		  struct tc_err *err);
int ing_perfetto_read(struct st_writer *w, struct tc_input *in, const struct ing_opts *opts,
		      struct tc_err *err);
int ing_ntff_read(struct st_writer *w, const char *path, const struct ing_opts *opts,
		  struct tc_err *err);

/** The formats ing_export() writes. */
enum ing_export_format {
	ING_EXPORT_PFTRACE,	/* plain Perfetto protobuf, our additions where it has room */
	ING_EXPORT_JSON,	/* Chrome Trace Event JSON */
};

/**
 * ing_export - write the finished trace store @db to @out as @format
 * (docs/perfetto-ingest.md, "Export").  @out_name names @out in errors.
 * Return: 0 or -errno with @err set.
 */
int ing_export(sqlite3 *db, int format, FILE *out, const char *out_name, struct tc_err *err);

/* ing_json_export - ing_export() as ING_EXPORT_JSON (ing-json-export.c). */
int ing_json_export(sqlite3 *db, FILE *out, const char *out_name, struct tc_err *err);

#endif /* ING_INGEST_H */
