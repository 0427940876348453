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

/*
 * pf_export_pftrace - write the finished trace store @db as a plain Perfetto
 * trace to @out: one TrackDescriptor per device (process) and unit (thread,
 * track or counter), slices as SLICE_BEGIN/SLICE_END pairs, instants,
 * counters, and flow edges as flow_ids.  Our extra edge kinds and the event
 * args go into debug annotations, which standard readers show as args.
 * Return: 0 or -errno with @err set.
 */
int pf_export_pftrace(sqlite3 *db, FILE *out, const char *out_name, struct tc_err *err);

#endif /* ING_PERFETTO_INT_H */
