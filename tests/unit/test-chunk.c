/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test-chunk.c - the cols blob of a packed event chunk
 * (store/st-chunk.h): every field comes back as it went in, whether it
 * repeats the event before it or not; counter values bit for bit (whole
 * numbers as differences, the others as doubles: NaN, -0.0, beyond 2^53);
 * and a blob that is cut, padded or inconsistent is refused, never read
 * past its end.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "store/st-chunk.h"
#include "store/store.h"
#include "tests/tap.h"

/* Whether @a and @b hold the same event, the value compared bit for bit. */
static bool
same(const struct st_cev *a, const struct st_cev *b)
{
	return a->ts == b->ts && a->dur == b->dur && a->seq == b->seq &&
	       !memcmp(&a->value, &b->value, sizeof(a->value)) && a->name == b->name &&
	       a->cat == b->cat && a->args_len == b->args_len && a->depth == b->depth &&
	       a->kind == b->kind && a->flags == b->flags;
}

/* Encode @n events, decode them back: 0 when each is the same. */
static int
round_trip(const struct st_cev *ev, int n, struct tc_buf *cols)
{
	struct st_cev *out = calloc((size_t)n, sizeof(*out));
	size_t args = 0;
	int rc = 0;

	tc_buf_reset(cols);
	for (int i = 0; i < n; i++) {
		st_chunk_enc_event(cols, &ev[i], i ? &ev[i - 1] : NULL);
		args += ev[i].args_len;
	}
	rc = st_chunk_decode(cols->data, cols->len, n, ev[0].ts, args, out);
	for (int i = 0; !rc && i < n; i++) {
		if (!same(&ev[i], &out[i])) {
			char msg[200];

			snprintf(msg, sizeof(msg), "event %d differs: ts %lld/%lld value %.17g/%.17g "
				 "name %u/%u", i, (long long)ev[i].ts, (long long)out[i].ts,
				 ev[i].value, out[i].value, ev[i].name, out[i].name);
			tap_diag(msg);
			rc = -1;
		}
		if (out[i].args_off != (i ? out[i - 1].args_off + out[i - 1].args_len : 0))
			rc = -2;
	}
	free(out);
	return rc;
}

static struct st_cev
counter(int64_t ts, double v)
{
	return (struct st_cev){ .ts = ts, .seq = ts / 10 + 1, .value = v, .name = 3,
				.kind = ST_EV_COUNTER };
}

int
main(void)
{
	static const double vals[] = {
		0, 1, 1, 2, -5, 4096, 4096.5, NAN, NAN, -0.0, 0, -0.0, 9007199254740992.0,
		-9007199254740992.0, 9007199254740994.0, 1e300, -1e-300, INFINITY, -INFINITY,
		123456789, 123456788, 0.1, 0.1, 42, 42, 42, -42, 1e15,
	};
	int nv = (int)(sizeof(vals) / sizeof(vals[0]));
	struct st_cev ev[64], *out;
	struct tc_buf cols;
	size_t full;
	int n = 0, bad = 0, fails = 0;

	tc_buf_init(&cols);

	/* a counter's samples: repeats, whole numbers, and those that are not */
	for (int i = 0; i < nv; i++)
		ev[i] = counter(1000 + 10 * i, vals[i]);
	is_int(round_trip(ev, nv, &cols), 0, "counter values back bit for bit (NaN, -0.0, 2^53, 1e300, inf)");
	ok(cols.len < (size_t)nv * 12, "... in %zu bytes for %d samples", cols.len, nv);

	/* a slow counter of whole numbers (1 MiB and up, every ~1 us, a sample
	 * in every ~100 events of the file): 6 bytes a sample, 15 as doubles */
	for (int i = 0; i < 64; i++)
		ev[i] = counter(5000 + 977 * i, (double)(1 << 20) + i * 3);
	is_int(round_trip(ev, 64, &cols), 0, "a slowly moving whole counter");
	ok(cols.len <= 64 * 6 + 8, "... in %zu bytes: 6 a sample, the first one aside", cols.len);

	/* slices and instants of one thread: every field changing or repeating */
	n = 0;
	for (int i = 0; i < 40; i++) {
		ev[n++] = (struct st_cev){
			.ts = 100 + 7 * i, .dur = i % 3 ? 5 : 0, .seq = 40 - i, .name = (uint32_t)(i % 4),
			.cat = (uint32_t)(i / 10), .depth = i % 5, .args_len = (uint32_t)(i % 6 ? 0 : i),
			.kind = (uint8_t)(i % 7 ? ST_EV_SLICE : ST_EV_INSTANT),
			.flags = (uint8_t)(i % 11 ? 0 : 1),
		};
	}
	is_int(round_trip(ev, n, &cols), 0, "slices and instants: each field repeated or not, args offsets summed");

	/* a counter after other events and back: the value before a counter's is 0 */
	n = 0;
	ev[n++] = counter(10, 7);
	ev[n++] = (struct st_cev){ .ts = 20, .seq = 9, .dur = 3, .name = 1 };
	ev[n++] = counter(30, 0);
	ev[n++] = counter(40, 7);
	ev[n++] = (struct st_cev){ .ts = 50, .seq = 10, .name = 1, .kind = ST_EV_INSTANT };
	ev[n++] = counter(60, 7);
	is_int(round_trip(ev, n, &cols), 0, "counters between other events");

	/* extremes: large times, seq going back, large ids and durations */
	n = 0;
	ev[n++] = (struct st_cev){ .ts = INT64_MAX - 100, .dur = 100, .seq = UINT32_MAX - 1,
				   .name = UINT32_MAX, .cat = UINT32_MAX, .depth = INT32_MAX };
	ev[n++] = (struct st_cev){ .ts = INT64_MAX - 1, .dur = 1, .seq = 1, .depth = 0 };
	is_int(round_trip(ev, n, &cols), 0, "times near INT64_MAX, seq going back, the largest ids");

	/* damage: a mixed chunk, cut at every length and padded */
	n = 0;
	for (int i = 0; i < 12; i++)
		ev[n++] = i % 2 ? counter(100 * i, i % 4 ? 1.5 * i : i) :
			  (struct st_cev){ .ts = 100 * i, .dur = 50, .seq = i + 1, .name = 2,
					   .args_len = 3, .depth = 1 };
	is_int(round_trip(ev, n, &cols), 0, "a mixed chunk");
	full = cols.len;
	out = calloc((size_t)n, sizeof(*out));
	for (size_t len = 0; len < full; len++) {
		uint8_t *copy = malloc(len ? len : 1);	/* exactly len bytes: ASan sees overreads */

		memcpy(copy, cols.data, len);
		if (st_chunk_decode(copy, len, n, ev[0].ts, 1000, out) != -EBADMSG)
			bad++;
		free(copy);
	}
	ok(bad == 0, "cut at each of its %zu lengths: -EBADMSG (%d not)", full, bad);
	tc_buf_add(&cols, "\0", 1);
	is_int(st_chunk_decode(cols.data, cols.len, n, ev[0].ts, 1000, out), -EBADMSG,
	       "a byte more: -EBADMSG");
	cols.len = full;
	is_int(st_chunk_decode(cols.data, cols.len, n, ev[0].ts, 17, out), -EBADMSG,
	       "args longer than the args blob: -EBADMSG");
	is_int(st_chunk_decode(cols.data, cols.len, n, ev[0].ts, 18, out), 0,
	       "... and exactly as long: 0");

	/* a value on an event that is not a counter */
	{
		static const uint8_t blob[] = { 64, 0, 2, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f };

		is_int(st_chunk_decode(blob, sizeof(blob), 1, 0, 0, out), -EBADMSG,
		       "a value on a slice: -EBADMSG");
	}
	/* a whole-number difference from a value that is not whole */
	{
		struct st_cev two[2] = { counter(0, 0.5), counter(10, 0.5) };
		uint8_t *p;

		tc_buf_reset(&cols);
		st_chunk_enc_event(&cols, &two[0], NULL);
		st_chunk_enc_event(&cols, &two[1], &two[0]);
		/* the second: h, ts, seq; set its value bits and add a difference of 1 */
		p = (uint8_t *)cols.data + cols.len - 3;
		*p |= 64 | 128;
		tc_buf_add(&cols, "\2", 1);
		is_int(st_chunk_decode(cols.data, cols.len, 2, 0, 0, out), -EBADMSG,
		       "a difference from 0.5: -EBADMSG");
	}

	/* seeded random chunks: every field at random, kinds mixed */
	srand(7);
	for (int r = 0; r < 2000; r++) {
		int64_t ts = rand();

		n = 1 + rand() % 64;
		for (int i = 0; i < n; i++) {
			int k = rand() % 3;
			double v = 0;

			ts += rand() % 3 ? rand() % 1000 : 0;
			if (k == ST_EV_COUNTER) {
				int m = rand() % 4;

				v = m == 0 ? (double)(rand() % 100) : m == 1 ? rand() / 7.0 :
				    m == 2 ? (i ? ev[i - 1].value : 1) : -(double)rand() * 65536.0;
			}
			ev[i] = (struct st_cev){
				.ts = ts, .dur = k == ST_EV_SLICE ? rand() % 5000 : 0,
				.seq = rand() % 100000, .value = v, .name = (uint32_t)(rand() % 5),
				.cat = (uint32_t)(rand() % 3), .depth = rand() % 4,
				.args_len = (uint32_t)(rand() % 4 ? 0 : rand() % 300),
				.kind = (uint8_t)k, .flags = (uint8_t)(rand() % 8 ? 0 : 1),
			};
		}
		if (round_trip(ev, n, &cols))
			fails++;
	}
	is_int(fails, 0, "2000 seeded random chunks come back the same");

	free(out);
	tc_buf_free(&cols);
	return tap_done();
}
