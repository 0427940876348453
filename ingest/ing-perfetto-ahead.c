/* SPDX-License-Identifier: MIT */
/*
 * ingest/ing-perfetto-ahead.c - the Perfetto reader's input side: reading,
 * framing the top-level Trace.packet fields and decoding them with the
 * hand decoder (pf_dec_packet), in batches, on a second thread once the
 * input is larger than one read.
 *
 * Why a thread: the reader's own thread is the longest one of an ingest
 * (decode, track state, args, staging) while the other core is half idle
 * during the parse.  Decoding has no state across packets, so it runs
 * ahead: each batch carries a copy of its packets' bytes (at most
 * PF_BATCH_ITEMS packets or PF_BATCH_BYTES bytes) and their decoded
 * structs in the batch's own arena, and the reader thread only walks the
 * structs.  Small batches stay in cache between the two threads; handing
 * them over wakes a thread only when it is waiting, and the decoder waits
 * for half the ring to be free before it resumes.
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
#define PF_READ (1u << 20)		/* bytes per input read */

struct pf_ahead {
	struct tc_input *in;		/* borrowed */
	const char *name;		/* borrowed */
	/* decoder side: its read buffer */
	uint8_t *buf;
	size_t cap, start, end;
	uint64_t off;			/* decompressed offset of buf[start] */
	bool eof, done;			/* done: the last batch is filled */
	size_t reads;

	struct pf_batch ring[PF_RING];
	unsigned head, n;		/* filled batches: ring[head], ... n of them */
	pthread_t thr;
	bool thr_on, no_thr, quit;	/* no_thr: pthread_create() failed once */
	bool cons_wait, prod_wait;	/* which side sleeps */
	pthread_mutex_t mu;
	pthread_cond_t cv_filled, cv_free;
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
 * Fill @b with the next packets.  The packets' bytes are copied first and
 * decoded after, since the copy buffer may move while it grows.
 */
static void
pf_batch_fill(struct pf_ahead *a, struct pf_batch *b)
{
	b->n = 0;
	b->rc = 0;
	b->last = false;
	b->err.code = 0;
	b->err.msg[0] = '\0';
	tc_buf_reset(&b->bytes);
	tc_arena_reset(&b->arena);
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
	for (size_t i = 0; i < b->n; i++) {
		struct pf_item *it = &b->items[i];

		it->data = (const uint8_t *)b->bytes.data + it->at;
		it->dec = pf_dec_packet(&b->arena, it->data, it->len, &it->pk);
	}
	b->raw_off = tc_input_raw_offset(a->in);
}

static void *
pf_ahead_thread(void *arg)
{
	struct pf_ahead *a = arg;

	tc_thread_name("pf-decode");
	pthread_mutex_lock(&a->mu);
	while (!a->quit && !a->done) {
		struct pf_batch *b;

		/* wait for half the ring to be free: fewer wake-ups */
		if (a->n == PF_RING || (a->prod_wait && a->n > PF_RING / 2)) {
			a->prod_wait = true;
			pthread_cond_wait(&a->cv_free, &a->mu);
			continue;
		}
		a->prod_wait = false;
		b = &a->ring[(a->head + a->n) % PF_RING];
		pthread_mutex_unlock(&a->mu);
		pf_batch_fill(a, b);
		pthread_mutex_lock(&a->mu);
		a->n++;
		a->done = b->last;
		if (a->cons_wait)
			pthread_cond_signal(&a->cv_filled);
	}
	pthread_mutex_unlock(&a->mu);
	return NULL;
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
	pthread_cond_init(&a->cv_filled, NULL);
	pthread_cond_init(&a->cv_free, NULL);
	*out = a;
}

struct pf_batch *
pf_ahead_next(struct pf_ahead *a)
{
	struct pf_batch *b;

	if (!a->thr_on) {
		if (a->done)
			return NULL;
		/*
		 * Inline until the input proves larger than one read: small
		 * traces (tests, fuzzing, most .ntff sections) get no thread.
		 */
		if (a->reads > 1 && !a->no_thr) {
			a->thr_on = pthread_create(&a->thr, NULL, pf_ahead_thread, a) == 0;
			a->no_thr = !a->thr_on;
		}
		if (!a->thr_on) {
			b = &a->ring[0];
			pf_batch_fill(a, b);
			a->done = b->last;
			return b;
		}
	}
	pthread_mutex_lock(&a->mu);
	while (!a->n && !a->done) {
		a->cons_wait = true;
		pthread_cond_wait(&a->cv_filled, &a->mu);
	}
	a->cons_wait = false;
	b = a->n ? &a->ring[a->head] : NULL;
	pthread_mutex_unlock(&a->mu);
	return b;
}

void
pf_ahead_done(struct pf_ahead *a, struct pf_batch *b)
{
	if (!a->thr_on)
		return;
	pthread_mutex_lock(&a->mu);
	a->head = (a->head + 1) % PF_RING;
	a->n--;
	if (a->prod_wait && a->n <= PF_RING / 2)
		pthread_cond_signal(&a->cv_free);
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
		pthread_cond_signal(&a->cv_free);
		pthread_mutex_unlock(&a->mu);
		pthread_join(a->thr, NULL);
	}
	for (int i = 0; i < PF_RING; i++) {
		tc_buf_free(&a->ring[i].bytes);
		tc_arena_free(&a->ring[i].arena);
		free(a->ring[i].items);
	}
	pthread_mutex_destroy(&a->mu);
	pthread_cond_destroy(&a->cv_filled);
	pthread_cond_destroy(&a->cv_free);
	free(a->buf);
	free(a);
}
