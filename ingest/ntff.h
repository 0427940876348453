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
#include <stdio.h>
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

/* ---- format constants (schemas/ntff.md) ---- */

#define NTFF_MAGIC_LEN 8
#define NTFF_VERSION_MAJOR 1
#define NTFF_VERSION_MINOR 0
#define NTFF_MAX_NAME 4096
#define NTFF_F_ZLIB 0x1		/* section flag: payload is a zlib stream */

/* ntff_magic - the 8 magic bytes: 8A 'N' 'T' 'F' '\r' '\n' 1A '\n'. */
extern const unsigned char ntff_magic[NTFF_MAGIC_LEN];

/** ntff_kind_name - "manifest", "perfetto", "json", "attachment", "unknown". */
const char *ntff_kind_name(int kind);
/** ntff_kind_parse - inverse of ntff_kind_name(); -1 when unknown. */
int ntff_kind_parse(const char *s);

/* ---- reader ---- */

/* Section status: what the reader knows about a section's payload. */
enum ntff_status {
	NTFF_ST_UNCHECKED = 0,	/* header fine, payload not read yet */
	NTFF_ST_OK,		/* CRC, zlib stream and raw length verified */
	NTFF_ST_BAD_CRC,	/* stored CRC32 does not match the payload */
	NTFF_ST_TRUNCATED,	/* the file ends inside the payload */
	NTFF_ST_INCOMPLETE,	/* the writer never finished it (lengths all-ones) */
	NTFF_ST_BAD_DATA,	/* CRC fine but zlib stream or raw length wrong */
};

/** ntff_status_name - "ok", "unchecked", "bad-crc", "truncated", ... */
const char *ntff_status_name(int status);

/**
 * struct ntff_section - one section as found by ntff_open().
 * @offset: byte offset of its header; @data_offset: of its payload.
 */
struct ntff_section {
	int kind;
	unsigned flags;
	char *name;
	uint64_t offset, data_offset;
	uint64_t stored_len, raw_len;
	uint32_t crc;
	int status;
};

struct ntff_reader;

/**
 * ntff_open - open @path and scan its section headers (payloads are not read).
 * The scan stops at the first unreadable header, a truncated or an incomplete
 * section; ntff_damage() then says what and where, and every section before
 * it stays usable.
 * Return: 0, or -errno with @err set when @path is not a readable .ntff file.
 */
int ntff_open(struct ntff_reader **r, const char *path, struct tc_err *err);
/** ntff_close - NULL is a no-op. */
void ntff_close(struct ntff_reader *r);
size_t ntff_count(const struct ntff_reader *r);
/** ntff_section - section @i (owned by @r), NULL when out of range. */
const struct ntff_section *ntff_section(const struct ntff_reader *r, size_t i);
/** ntff_damage - why the scan stopped before the end of the file, or NULL. */
const char *ntff_damage(const struct ntff_reader *r);
/**
 * ntff_damage_listed - whether the scan stopped at a section it lists (the
 * last one: incomplete or truncated), so that reading that section reports
 * the same damage; false when it stopped at a header it could not trust.
 */
bool ntff_damage_listed(const struct ntff_reader *r);
void ntff_version(const struct ntff_reader *r, unsigned *major, unsigned *minor);
/** ntff_find - index of the first section named @name, -1 when none. */
int ntff_find(const struct ntff_reader *r, const char *name);
/**
 * ntff_check - read section @i, verifying its CRC32 (and, when compressed,
 * its zlib stream and raw length); updates its status.
 * Return: 0, or -EBADMSG with @err naming the section and its offset.
 */
int ntff_check(struct ntff_reader *r, size_t i, struct tc_err *err);
/**
 * ntff_read - the verified, decompressed payload of section @i in *@data
 * (malloc'd, the caller frees; NUL-terminated for convenience).
 */
int ntff_read(struct ntff_reader *r, size_t i, void **data, size_t *len, struct tc_err *err);
/**
 * ntff_map - the verified, decompressed payload of section @i without
 * holding it in heap memory: an uncompressed section is mapped from the file,
 * a compressed one is inflated into an unlinked temporary file ($TMPDIR) that
 * is mapped.  Release with ntff_unmap(*@cookie).
 */
int ntff_map(struct ntff_reader *r, size_t i, const void **data, size_t *len, void **cookie,
	     struct tc_err *err);
/** ntff_unmap - release a mapping from ntff_map(); NULL is a no-op. */
void ntff_unmap(void *cookie);
/** ntff_extract - stream section @i to @out (decompressed unless @raw), verifying it. */
int ntff_extract(struct ntff_reader *r, size_t i, FILE *out, const char *out_name, bool raw,
		 struct tc_err *err);

#endif /* ING_NTFF_H */
