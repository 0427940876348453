/* SPDX-License-Identifier: MIT */
/*
 * ingest/ntff.h - the .ntff run container (format: schemas/ntff.md).
 * Append-only sections, each with its kind, name, length and CRC32, optionally
 * zlib-compressed.  Written by the capture agent and `convert`, read by ingest
 * and `ntff ls|cat|verify`.
 */
#ifndef ING_NTFF_H
#define ING_NTFF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "common/tc.h"

enum ntff_section_kind {
	NTFF_SEC_MANIFEST = 1,		/* JSON manifest of the run */
	NTFF_SEC_PERFETTO = 2,		/* Perfetto protobuf packets (a Trace) */
	NTFF_SEC_JSON = 3,		/* Chrome/Kineto JSON trace */
	NTFF_SEC_ATTACHMENT = 4,	/* raw file kept as is (vendor output) */
};

struct ntff_writer;

/** ntff_writer_open - create @path (truncating) and write the file header. */
int ntff_writer_open(struct ntff_writer **w, const char *path, struct tc_err *err);
/**
 * ntff_writer_add - append one complete section from memory and flush it, so
 * a capture killed later still leaves this section readable.
 * @name: section name, e.g. "manifest.json", "framework/trace.json".
 * @compress: zlib-compress the payload.
 */
int ntff_writer_add(struct ntff_writer *w, int kind, const char *name, const void *data,
		    size_t len, bool compress, struct tc_err *err);
/** ntff_writer_add_file - the same, streaming the payload from @path. */
int ntff_writer_add_file(struct ntff_writer *w, int kind, const char *name, const char *path,
			 bool compress, struct tc_err *err);
/** ntff_writer_close - flush, fsync and close; frees @w in every case. */
int ntff_writer_close(struct ntff_writer *w, struct tc_err *err);

/** ntff_is_ntff - whether @head (>= 8 bytes) starts with the .ntff magic. */
bool ntff_is_ntff(const unsigned char *head, size_t len);

#endif /* ING_NTFF_H */
