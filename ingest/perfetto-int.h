/* SPDX-License-Identifier: MIT */
/*
 * ingest/perfetto-int.h - internals shared by the Perfetto reader
 * (ing-perfetto.c), its helpers (ing-perfetto-map.c) and the Perfetto
 * exporter (ing-perfetto-export.c).  Not for use outside ingest/.
 */
#ifndef ING_PERFETTO_INT_H
#define ING_PERFETTO_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sqlite3.h>
#include "common/tc.h"
#include "ingest/perfetto.pb-c.h"	/* generated from schemas/perfetto.proto */

/* Largest TracePacket (and inflated compressed_packets block) we accept. */
#define PF_MAX_PACKET (256u << 20)

/*
 * What our exporter adds for our reader (ing-perfetto-export.c): a track's
 * description "neuron-explorer unit: KIND" (st_unit_kind_name()) or, on an
 * overflow track, "neuron-explorer overlaps"; and on
 * each event the debug annotations "nx.id" (its id in the exported store)
 * and "nx.deps" (JSON: [{"kind","dst","label"}], the edges from it, dst an
 * nx.id).  Standard readers show them and otherwise ignore them.
 */
#define PF_NX_UNIT_DESC "neuron-explorer unit: "
/* an "(overlaps)" track: more rows of its parent's unit (slices that do not nest) */
#define PF_NX_OVER_DESC "neuron-explorer overlaps"
#define PF_NX_ID "nx.id"
#define PF_NX_DEPS "nx.deps"

/*
 * struct pf_map - open-addressing hash map from uint64 keys (0 included) to
 * uint64 values.  The caller owns whatever the values point to.
 */
struct pf_map {
	uint64_t *keys;
	uint64_t *vals;
	uint8_t *used;
	size_t cap;	/* power of two, or 0 */
	size_t n;
};

void pf_map_init(struct pf_map *m);
void pf_map_free(struct pf_map *m);
/* pf_map_clear - forget every entry, keeping the storage. */
void pf_map_clear(struct pf_map *m);
/* pf_map_get - the value of @key in *@val; false when absent. */
bool pf_map_get(const struct pf_map *m, uint64_t key, uint64_t *val);
/* pf_map_slot - the value slot of @key, created (0) when absent. */
uint64_t *pf_map_slot(struct pf_map *m, uint64_t key, bool *created);
/* pf_map_each - iterate: start with *@i = 0; false at the end. */
bool pf_map_each(const struct pf_map *m, size_t *i, uint64_t *key, uint64_t *val);

/* pf_varint - decode a varint at @p (< @end); bytes used, 0 when truncated or
 * longer than 10 bytes. */
size_t pf_varint(const uint8_t *p, const uint8_t *end, uint64_t *v);

/* pf_dec_packet() results */
enum {
	PF_DEC_BAD = -1,	/* malformed: protobuf-c rejects it too */
	PF_DEC_OK = 0,
	PF_DEC_SLOW = 1,	/* not for the fast path: unpack it with protobuf-c */
};

/*
 * pf_dec_packet - decode the TracePacket [@data, @data + @len) into *@pk
 * without protobuf-c's generic unpack (ing-perfetto-dec.c).  Strings,
 * arrays and submessages come from @a (release them with tc_arena_reset());
 * compressed_packets and interned string bytes point into @data, which must
 * outlive *@pk.  Nothing else to free.
 * Return: PF_DEC_OK with *@pk filled as protobuf-c would fill it;
 * PF_DEC_SLOW for a packet the fast path leaves to protobuf-c (clock
 * snapshots, descriptors, defaults, unusual encodings); PF_DEC_BAD for a
 * malformed one (truncated varint or fixed field, a length past the end of
 * its message, a group or reserved wire type).  *@pk is unusable unless
 * PF_DEC_OK.
 */
int pf_dec_packet(struct tc_arena *a, const uint8_t *data, size_t len,
		  Perfetto__Protos__TracePacket *pk);

/* ---- the input side: framing and decoding ahead (ing-perfetto-ahead.c) ---- */

/*
 * pf_frame - skip or take one field of a Trace at @p (< @end), at
 * decompressed offset @off; @top: the outermost Trace (its first byte must
 * open a packet).  Return: bytes used, 0 when more input is needed (never
 * when @at_eof), or -errno with @err set (naming @name) on a bad field.
 * *@pkt and *@pkt_len are set for a packet (field 1), else *@pkt is NULL.
 */
long pf_frame(const char *name, struct tc_err *err, bool top, const uint8_t *p,
	      const uint8_t *end, uint64_t off, bool at_eof, const uint8_t **pkt,
	      size_t *pkt_len);

/*
 * pf_sniff - do the first bytes of an input [@h, @h + @n) look like a Perfetto
 * Trace?  It must open with a packet (0x0a), and every field as far as the
 * bytes go must be well-formed, the packets' own fields too: 3000 random
 * bytes that start with 0x0a are not taken for a trace.
 */
bool pf_sniff(const uint8_t *h, size_t n);

#define PF_BATCH_ITEMS 1024	/* packets per batch, at most */
#define PF_BATCH_BYTES (256u << 10)	/* packet bytes per batch, about */

/* One framed packet of a batch. */
struct pf_item {
	uint64_t off;			/* its field's decompressed offset */
	const uint8_t *data;		/* its bytes, in the batch */
	size_t len, at;
	int dec;			/* pf_dec_packet()'s result ... */
	Perfetto__Protos__TracePacket pk;	/* ... and the packet when PF_DEC_OK */
};

/* Packets framed and decoded ahead; everything points into the batch. */
struct pf_batch {
	struct pf_item *items;
	size_t n, cap_items;
	struct tc_buf bytes;		/* the packets' bytes */
	struct tc_arena arena;		/* their decoded submessages */
	int rc;				/* 0, or the error after the items (in @err) */
	struct tc_err err;
	bool last;			/* nothing follows */
	uint64_t raw_off;		/* compressed input consumed, for progress */
};

struct pf_ahead;

/** pf_ahead_init - read @in (named @name in errors) through batches. */
void pf_ahead_init(struct pf_ahead **out, struct tc_input *in, const char *name);
/**
 * pf_ahead_next - the next batch, NULL after the last one.  Hand each back
 * with pf_ahead_done() before asking for the next.  The first batches are
 * made on the caller's thread; once the input outgrows one read, a thread
 * frames them ahead and they are decoded by it, by NX_PF_THREADS - 1 more
 * threads and by the caller while it waits for one.
 */
struct pf_batch *pf_ahead_next(struct pf_ahead *a);
void pf_ahead_done(struct pf_ahead *a, struct pf_batch *b);
/** pf_ahead_free - stop the thread and free everything (NULL is a no-op). */
void pf_ahead_free(struct pf_ahead *a);

/*
 * pf_export_pftrace - write the finished trace store @db as a plain Perfetto
 * trace to @out: one TrackDescriptor per device (process) and unit (thread,
 * track or counter), slices as SLICE_BEGIN/SLICE_END pairs, instants,
 * counters, and flow edges as flow_ids.  Our extra edge kinds and the event
 * args go into debug annotations, which standard readers show as args.
 * Return: 0 or -errno with @err set.
 */
int pf_export_pftrace(sqlite3 *db, FILE *out, const char *out_name, struct tc_err *err);

/* ---- our export read back (ing-perfetto-nx.c) ---- */

struct pf_nx;
struct st_writer;

/**
 * pf_nx_note - the event with flow handle @handle was exported as nx.id @id,
 * with nx.deps text @deps (NULL: none, copied).  Allocates *@np on first use.
 */
void pf_nx_note(struct pf_nx **np, int64_t id, uint64_t handle, const char *deps);

/**
 * pf_nx_resolve - add the noted nx.deps edges to @w once every handle's
 * sequence number is known (@hseq: handle -> seq).  Entries that name no
 * exported event are counted as bad events of @name.  Return: 0 or the
 * negative errno of st_edge_add().
 */
int pf_nx_resolve(struct pf_nx *n, const int64_t *hseq, struct st_writer *w, const char *name);

/** pf_nx_free - free @n (NULL is fine). */
void pf_nx_free(struct pf_nx *n);

#endif /* ING_PERFETTO_INT_H */
