/* SPDX-License-Identifier: MIT */
/*
 * ingest/ing-perfetto-ahead.c - the Perfetto reader's input side: reading,
 * framing the top-level Trace.packet fields and decoding them with the
 * hand decoder (pf_dec_packet), in batches, ahead of the reader once the
 * input is larger than one read.
 *
 * Why threads: decoding is the longest step of a Perfetto ingest (the
 * reader's own work on the decoded packets, track state, args and staging,
 * takes about half as long), and it has no state across packets.  So one
 * thread reads and frames batches in order (a copy of each packet's bytes,
 * at most PF_BATCH_ITEMS packets or PF_BATCH_BYTES bytes, which is cheap),
 * and the batches are decoded, each into its own arena, by whoever is free:
 * the framing thread when it is PF_FRAME_AHEAD batches ahead of the
 * decoding, the reader whenever the batch it needs next is not decoded yet,
 * and, with more CPUs, up to PF_DECODERS_MAX more threads
 * (NX_PF_THREADS=N: N threads besides the reader's, the framing one
 * included).  Batches are decoded in the order they are claimed, used in
 * the order they were framed.  A thread is woken only when one sleeps.
 *
 * Errors (framing, input) end the stream: the batch that carries one holds
 * the packets before it, then the error, as a one-thread read would give.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "ingest/perfetto-int.h"

#define PF_RING 8			/* batches in flight */
#define PF_FRAME_AHEAD 3		/* framed, not yet claimed, before the framer decodes */
#define PF_DECODERS_MAX 3		/* decoding threads besides the framer */
#define PF_READ (1u << 20)		/* bytes per input read */

/*
 * Batch i (a count from 0) lives in ring[i % PF_RING].  Counters, all under
 * mu: head <= claimed <= framed <= head + PF_RING.  Batches [head, claimed)
 * are being decoded or decoded (dec_done says which), [claimed, framed)
 * wait for a decoder, [framed, head + PF_RING) are free.
 */
struct pf_ahead {
	struct tc_input *in;		/* borrowed */
	const char *name;		/* borrowed */
	/* framer side: its read buffer */
	uint8_t *buf;
	size_t cap, start, end;
	uint64_t off;			/* decompressed offset of buf[start] */
	bool eof;
	size_t reads;

	struct pf_batch ring[PF_RING];
	bool dec_done[PF_RING];
	uint64_t head, claimed, framed;
	bool done;			/* the last batch is framed */
	pthread_t thr[1 + PF_DECODERS_MAX];
	int nthr;			/* threads running: the framer, then decoders */
	bool thr_on, no_thr, quit;	/* no_thr: pthread_create() failed once */
	int sleepers;			/* threads waiting on cv */
	pthread_mutex_t mu;
	pthread_cond_t cv;
};

/*
 * pf_fields_ok - do the bytes [@p, @p + @n) open a well-formed run of
 * protobuf fields in a message of @lim bytes (@lim >= @n)?  Each tag names a
 * field > 0 with wire type 0, 1, 2 or 5, each varint ends within 10 bytes,
 * each length fits the message.  A field cut by @n counts as well-formed:
 * @n is where the sniffed bytes stop, not the message.  @top: the message is
 * a Trace: only packets (field 1), whose own fields are checked too (a
 * Trace has no other field; pf_frame() would skip one).
 */
static bool
pf_fields_ok(const uint8_t *p, size_t n, uint64_t lim, bool top)
{
	uint64_t tag, v;
	size_t at = 0, k;

	while (at < n) {
		k = pf_varint(p + at, p + n, &tag);
		if (!k)
			return n - at < 10;
		if ((tag >> 3) == 0 || (top && tag != 0x0a))
			return false;
		at += k;
		switch (tag & 7) {
		case 0:
			k = pf_varint(p + at, p + n, &v);
			if (!k)
				return n - at < 10;
			v = k;
			break;
		case 1:
			v = 8;
			break;
		case 5:
			v = 4;
			break;
		case 2:
			k = pf_varint(p + at, p + n, &v);
			if (!k)
				return n - at < 10;
			at += k;
			if (top && v > PF_MAX_PACKET)
				return false;
			if (top && !pf_fields_ok(p + at, (size_t)TC_MIN(v, (uint64_t)(n - at)), v, false))
				return false;
			break;
		default:
			return false;
		}
		if (v > lim - at)
			return false;
		if (v >= n - at)
			break;
		at += (size_t)v;
	}
	return true;
}

bool
pf_sniff(const uint8_t *h, size_t n)
{
	return n >= 2 && h[0] == 0x0a && pf_fields_ok(h, n, UINT64_MAX, true);
}

long
pf_frame(const char *name, struct tc_err *err, bool top, const uint8_t *p, const uint8_t *end,
	 uint64_t off, bool at_eof, const uint8_t **pkt, size_t *pkt_len)
{
	uint64_t tag, len;
	size_t n, m;

	*pkt = NULL;
	n = pf_varint(p, end, &tag);
	if (!n) {
		if (!at_eof && end - p < 10)
			return 0;
		return tc_err_set(err, -EINVAL, "%s: truncated varint (field tag) at byte %"
				  PRIu64, name, off);
	}
	if (off == 0 && top && tag != 0x0a)
		return tc_err_set(err, -EINVAL, "%s: not a Perfetto trace: byte 0 is 0x%02x, "
				  "a Trace starts with a packet (0x0a)", name, p[0]);
	switch (tag & 7) {
	case 0:
		m = pf_varint(p + n, end, &len);
		if (!m)
			goto short_varint;
		return (long)(n + m);
	case 1:
		if (end - p < (long)n + 8)
			goto short_data;
		return (long)(n + 8);
	case 5:
		if (end - p < (long)n + 4)
			goto short_data;
		return (long)(n + 4);
	case 2:
		break;
	default:
		return tc_err_set(err, -EINVAL, "%s: not a Perfetto trace: bad field tag 0x%"
				  PRIx64 " at byte %" PRIu64, name, tag, off);
	}
	if ((tag >> 3) == 0)
		return tc_err_set(err, -EINVAL, "%s: not a Perfetto trace: field 0 at byte %"
				  PRIu64, name, off);
	m = pf_varint(p + n, end, &len);
	if (!m)
		goto short_varint;
	if (len > PF_MAX_PACKET)
		return tc_err_set(err, -EFBIG, "%s: packet at byte %" PRIu64 " claims %" PRIu64
				  " bytes (limit %u MiB): corrupt length?", name, off, len,
				  PF_MAX_PACKET >> 20);
	if ((uint64_t)(end - p) < n + m + len)
		goto short_data_len;
	if ((tag >> 3) == 1) {
		*pkt = p + n + m;
		*pkt_len = (size_t)len;
	}
	return (long)(n + m + len);
short_varint:
	if (!at_eof && end - p < 20)
		return 0;
	return tc_err_set(err, -EINVAL, "%s: truncated varint (packet length) at byte %" PRIu64,
			  name, off);
short_data:
	if (!at_eof)
		return 0;
	return tc_err_set(err, -EINVAL, "%s: truncated field at byte %" PRIu64, name, off);
short_data_len:
	if (!at_eof)
		return 0;
	return tc_err_set(err, -EINVAL, "%s: truncated packet at byte %" PRIu64 ": %" PRIu64
			  " bytes announced, %zu present", name, off, len,
			  (size_t)(end - p) - n - m);
}

/* Read more input into a->buf; 0, or -errno with @err set. */
static int
pf_ahead_read(struct pf_ahead *a, struct tc_err *err)
{
	long n;

	if (a->start) {
		memmove(a->buf, a->buf + a->start, a->end - a->start);
		a->end -= a->start;
		a->start = 0;
	}
	if (a->end == a->cap) {
		uint64_t want;

		/* grow to hold the announced packet */
		if (pf_varint(a->buf + 1, a->buf + a->end, &want) && want + 16 > a->cap)
			a->cap = (size_t)want + 16;
		else
			a->cap *= 2;
		a->buf = tc_xrealloc(a->buf, a->cap);
	}
	n = tc_input_read(a->in, a->buf + a->end, TC_MIN(a->cap - a->end, PF_READ), err);
	if (n < 0)
		return (int)n;
	if (n == 0)
		a->eof = true;
	a->end += (size_t)n;
	a->reads++;
	return 0;
}

/* Take one packet into @b: its bytes copied, then decoded there. */
static void
pf_batch_add(struct pf_batch *b, const uint8_t *pkt, size_t len, uint64_t off)
{
	struct pf_item *it;

	if (b->n == b->cap_items) {
		b->cap_items = b->cap_items ? b->cap_items * 2 : 64;
		b->items = tc_xrealloc(b->items, b->cap_items * sizeof(*b->items));
	}
	it = &b->items[b->n++];
	it->off = off;
	it->len = len;
	it->at = b->bytes.len;
	tc_buf_add(&b->bytes, pkt, len);
}

/*
 * Frame the next packets into @b: their bytes copied, not decoded yet (the
 * copy buffer may move while it grows; pf_batch_decode() points into it).
 * Only the framer calls it: it owns the read buffer.
 */
static void
pf_batch_frame(struct pf_ahead *a, struct pf_batch *b)
{
	b->n = 0;
	b->rc = 0;
	b->last = false;
	b->err.code = 0;
	b->err.msg[0] = '\0';
	tc_buf_reset(&b->bytes);
	while (b->n < PF_BATCH_ITEMS && b->bytes.len < PF_BATCH_BYTES) {
		const uint8_t *pkt;
		size_t pkt_len;
		long used;

		if (a->start == a->end && a->eof) {
			b->last = true;
			break;
		}
		used = a->start < a->end ? pf_frame(a->name, &b->err, true, a->buf + a->start,
						    a->buf + a->end, a->off, a->eof, &pkt,
						    &pkt_len) : 0;
		if (used < 0) {
			b->rc = (int)used;
			b->last = true;
			break;
		}
		if (used == 0) {	/* need more input */
			int rc = pf_ahead_read(a, &b->err);

			if (rc < 0) {
				b->rc = rc;
				b->last = true;
				break;
			}
			continue;
		}
		if (pkt)
			pf_batch_add(b, pkt, pkt_len, a->off);
		a->start += (size_t)used;
		a->off += (uint64_t)used;
	}
	b->raw_off = tc_input_raw_offset(a->in);
}

/* Decode a framed batch's packets into its arena: any thread, one at a time. */
static void
pf_batch_decode(struct pf_batch *b)
{
	tc_arena_reset(&b->arena);
	for (size_t i = 0; i < b->n; i++) {
		struct pf_item *it = &b->items[i];

		it->data = (const uint8_t *)b->bytes.data + it->at;
		it->dec = pf_dec_packet(&b->arena, it->data, it->len, &it->pk);
	}
}

/* Wake the sleepers, if any: the counters moved.  Called with a->mu held. */
static void
pf_ahead_wake(struct pf_ahead *a)
{
	if (a->sleepers)
		pthread_cond_broadcast(&a->cv);
}

static void
pf_ahead_sleep(struct pf_ahead *a)
{
	a->sleepers++;
	pthread_cond_wait(&a->cv, &a->mu);
	a->sleepers--;
}

/*
 * Claim the oldest framed batch nobody decodes and decode it.  Called with
 * a->mu held and a->claimed < a->framed; returns with it held.
 */
static void
pf_ahead_decode_one(struct pf_ahead *a)
{
	uint64_t i = a->claimed++;
	struct pf_batch *b = &a->ring[i % PF_RING];

	a->dec_done[i % PF_RING] = false;
	pthread_mutex_unlock(&a->mu);
	pf_batch_decode(b);
	pthread_mutex_lock(&a->mu);
	a->dec_done[i % PF_RING] = true;
	pf_ahead_wake(a);
}

/* Whether the framer has a batch to frame: one free, and not too far ahead. */
static bool
pf_ahead_can_frame(const struct pf_ahead *a)
{
	return !a->done && a->framed - a->head < PF_RING &&
	       a->framed - a->claimed < PF_FRAME_AHEAD;
}

/*
 * A thread ahead of the reader: decodes what is framed and sleeps when
 * there is nothing; the framer (@frames) frames first while it may.  Ends
 * once the last batch is framed and claimed.
 */
static void
pf_ahead_run(struct pf_ahead *a, bool frames)
{
	pthread_mutex_lock(&a->mu);
	while (!a->quit) {
		if (frames && pf_ahead_can_frame(a)) {
			uint64_t i = a->framed;
			struct pf_batch *b = &a->ring[i % PF_RING];

			pthread_mutex_unlock(&a->mu);
			pf_batch_frame(a, b);
			pthread_mutex_lock(&a->mu);
			a->framed = i + 1;
			a->done = b->last;
			pf_ahead_wake(a);
		} else if (a->claimed < a->framed) {
			pf_ahead_decode_one(a);
		} else if (a->done) {
			break;
		} else {
			pf_ahead_sleep(a);
		}
	}
	pthread_mutex_unlock(&a->mu);
}

static void *
pf_ahead_framer(void *arg)
{
	tc_thread_name("pf-decode");
	pf_ahead_run(arg, true);
	return NULL;
}

static void *
pf_ahead_decoder(void *arg)
{
	tc_thread_name("pf-decode2");
	pf_ahead_run(arg, false);
	return NULL;
}

/*
 * Threads besides the reader's: NX_PF_THREADS, or one (the framer) and
 * one decoder per CPU beyond two, PF_DECODERS_MAX at most.
 */
static int
pf_ahead_threads(void)
{
	long dflt = TC_MIN(TC_MAX(tc_ncpus() - 1, 1), 1 + PF_DECODERS_MAX);

	return (int)tc_env_num("NX_PF_THREADS", 1, 1 + PF_DECODERS_MAX, dflt);
}

/* Start the framer and the decoders (no thread of @a runs yet). */
static void
pf_ahead_start(struct pf_ahead *a)
{
	int want = pf_ahead_threads();

	a->thr_on = pthread_create(&a->thr[0], NULL, pf_ahead_framer, a) == 0;
	a->no_thr = !a->thr_on;
	if (!a->thr_on)
		return;
	a->nthr = 1;
	while (a->nthr < want &&
	       pthread_create(&a->thr[a->nthr], NULL, pf_ahead_decoder, a) == 0)
		a->nthr++;
}

void
pf_ahead_init(struct pf_ahead **out, struct tc_input *in, const char *name)
{
	struct pf_ahead *a = tc_xcalloc(1, sizeof(*a));

	a->in = in;
	a->name = name;
	a->cap = PF_READ;
	a->buf = tc_xmalloc(a->cap);
	for (int i = 0; i < PF_RING; i++) {
		tc_buf_init(&a->ring[i].bytes);
		tc_arena_init(&a->ring[i].arena, 1 << 20);	/* a whole batch: no chunk freed per batch */
	}
	pthread_mutex_init(&a->mu, NULL);
	pthread_cond_init(&a->cv, NULL);
	*out = a;
}

struct pf_batch *
pf_ahead_next(struct pf_ahead *a)
{
	struct pf_batch *b = NULL;

	if (!a->thr_on) {
		if (a->done)
			return NULL;
		/*
		 * Inline until the input proves larger than one read: small
		 * traces (tests, fuzzing, most .ntff sections) get no thread.
		 * Every inline batch has been handed back: the ring is empty.
		 */
		if (a->reads > 1 && !a->no_thr)
			pf_ahead_start(a);
		if (!a->thr_on) {
			b = &a->ring[0];
			pf_batch_frame(a, b);
			pf_batch_decode(b);
			a->done = b->last;
			return b;
		}
	}
	pthread_mutex_lock(&a->mu);
	for (;;) {
		if (a->head < a->claimed && a->dec_done[a->head % PF_RING]) {
			b = &a->ring[a->head % PF_RING];
			break;
		}
		if (a->claimed < a->framed)	/* help: this one or one needed soon */
			pf_ahead_decode_one(a);
		else if (a->head == a->framed && a->done)
			break;
		else
			pf_ahead_sleep(a);
	}
	pthread_mutex_unlock(&a->mu);
	return b;
}

void
pf_ahead_done(struct pf_ahead *a, struct pf_batch *b)
{
	if (!a->thr_on)
		return;
	pthread_mutex_lock(&a->mu);
	a->head++;
	pf_ahead_wake(a);
	pthread_mutex_unlock(&a->mu);
	(void)b;
}

void
pf_ahead_free(struct pf_ahead *a)
{
	if (!a)
		return;
	if (a->thr_on) {
		pthread_mutex_lock(&a->mu);
		a->quit = true;
		pthread_cond_broadcast(&a->cv);
		pthread_mutex_unlock(&a->mu);
		for (int i = 0; i < a->nthr; i++)
			pthread_join(a->thr[i], NULL);
	}
	for (int i = 0; i < PF_RING; i++) {
		tc_buf_free(&a->ring[i].bytes);
		tc_arena_free(&a->ring[i].arena);
		free(a->ring[i].items);
	}
	pthread_mutex_destroy(&a->mu);
	pthread_cond_destroy(&a->cv);
	free(a->buf);
	free(a);
}
