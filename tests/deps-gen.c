/* SPDX-License-Identifier: MIT */
/*
 * tests/deps-gen.c - a small seeded generator of a SYNTHETIC engine trace
 * (Chrome JSON) with access sets and semaphores, for the dependency
 * benchmarks (bench/deps-bench.sh).  It imitates the shape of an
 * accelerator instruction trace (a few in-order engines and DMA queues, each
 * instruction reading and writing byte ranges of on-chip buffers, engines
 * signalling semaphores that others wait on) but is not a real trace.
 *
 *   deps-gen [-n EVENTS] [-s SEED] [--plain] > trace.json
 *
 * --plain writes the same events with args of a similar size but no access
 * sets, for the baseline.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NENG 6		/* 4 compute engines + 2 DMA queues */
#define NBUF 16
#define BUF_BYTES (1u << 20)
#define TILE 512

static uint64_t rng;

static uint64_t
next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static unsigned
below(unsigned n)
{
	return (unsigned)(next() % n);
}

static const char *const eng_name[NENG] = { "pe", "act", "pool", "gpsimd", "dma.q0", "dma.q1" };

int
main(int argc, char **argv)
{
	int64_t n = 1000000, cursor[NENG] = { 0 }, nsig[NENG] = { 0 };
	uint64_t seed = 42;
	int plain = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-n") && i + 1 < argc)
			n = strtoll(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "-s") && i + 1 < argc)
			seed = strtoull(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--plain"))
			plain = 1;
		else {
			fprintf(stderr, "usage: deps-gen [-n EVENTS] [-s SEED] [--plain]\n");
			return 2;
		}
	}
	rng = seed * 2654435761u + 88172645463325252ull;
	printf("{\"otherData\": {\"generator\": \"neuron-explorer tests/deps-gen (SYNTHETIC)\", "
	       "\"seed\": %" PRIu64 "},\n\"traceEvents\": [\n", seed);
	for (int64_t i = 0; i < n; i++) {
		int e = (int)(i % NENG);
		int64_t dur = 50 + below(450), ts = cursor[e] + below(40);
		unsigned b1 = below(NBUF), b2 = below(NBUF), b3 = below(NBUF);
		/* tiles of 512 bytes, as a compiler would allocate them; one or two per access */
		unsigned o1 = below(BUF_BYTES / TILE) * TILE, o2 = below(BUF_BYTES / TILE) * TILE;
		unsigned o3 = below(BUF_BYTES / TILE) * TILE;
		unsigned l1 = TILE * (1 + below(2)), l2 = TILE * (1 + below(2)), l3 = TILE * (1 + below(2));
		char args[512];

		cursor[e] = ts + dur;
		if (plain) {
			snprintf(args, sizeof(args),
				 "{\"pc\": %" PRId64 ", \"in\": [\"sb%u+%u:%u\", \"sb%u+%u:%u\"], "
				 "\"out\": [\"sb%u+%u:%u\"], \"sem\": [\"S%d\"]}",
				 i, b1, o1, o1 + l1, b2, o2, o2 + l2, b3, o3, o3 + l3, e);
		} else {
			int len = snprintf(args, sizeof(args),
					   "{\"pc\": %" PRId64 ", \"reads\": [\"sb%u[%u:%u]\", "
					   "\"sb%u[0x%x:0x%x]\"], \"writes\": [\"sb%u[%u:%u]\"]",
					   i, b1, o1, o1 + l1, b2, o2, o2 + l2, b3, o3, o3 + l3);

			if (below(4) == 0) {
				len += snprintf(args + len, sizeof(args) - len,
						", \"signals\": [\"S%d\"]", e);
				nsig[e]++;
			}
			if (below(4) == 0) {
				int o = (int)below(NENG);

				if (nsig[o] > 2)
					len += snprintf(args + len, sizeof(args) - len,
							", \"waits\": [\"S%d>=%" PRId64 "\"]", o,
							nsig[o] - 2);
			}
			snprintf(args + len, sizeof(args) - len, "}");
		}
		printf("%s{\"name\": \"op%u\", \"ph\": \"X\", \"ts\": %" PRId64 ".%03d, "
		       "\"dur\": %" PRId64 ".%03d, \"pid\": 0, \"tid\": %d, \"args\": %s}",
		       i ? ",\n" : "", below(64), ts / 1000, (int)(ts % 1000), dur / 1000,
		       (int)(dur % 1000), e + 1, args);
		if (i == 0) {
			printf(",\n{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": 0, \"tid\": 0, "
			       "\"args\": {\"name\": \"GPU 0\"}}");
			for (int k = 0; k < NENG; k++)
				printf(",\n{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": 0, "
				       "\"tid\": %d, \"args\": {\"name\": \"%s\"}}", k + 1,
				       eng_name[k]);
		}
	}
	printf("\n]}\n");
	return 0;
}
