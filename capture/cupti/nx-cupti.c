/* SPDX-License-Identifier: MIT */
/*
 * capture/cupti/nx-cupti.c - the CUPTI injection library (libnx-cupti.so).
 *
 * Loaded into the workload by the CUDA driver through CUDA_INJECTION64_PATH,
 * which calls InitializeInjection().  Records kernels, memcpy, memset,
 * synchronization, CUDA events and runtime/driver API calls with the CUPTI
 * activity API, and at exit writes one Chrome/Kineto-style JSON trace
 * ($NX_CUPTI_OUTPUT, default $NX_CAPTURE_DIR/kernel/cupti.json):
 *   - device rows: pid "GPU N", tid "channel TYPE ID" when CUPTI reports the
 *     hardware channel, else "stream S";
 *   - host rows: the API calls on their process/thread;
 *   - flows (cat "ac2g", like Kineto) from each launch API call to its GPU
 *     operation, matched by correlation id;
 *   - order flows (cat "nx.order") for cross-stream event waits
 *     (cudaStreamWaitEvent): from the last operation issued on the recording
 *     stream before cudaEventRecord to the first operation issued on the
 *     waiting stream after the wait, matched by cudaEventSyncId.
 * Statistics (records, dropped, filtered, our own overhead) go to
 * cupti-stats.json beside the trace.  Never aborts or prints in the host
 * process beyond one line on a failed start: it counts and drops.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cupti.h>

#define NXC_EXPORT __attribute__((visibility("default")))
#define NXC_BUF_SIZE (4u << 20)

enum nxc_kind { NXC_KERNEL, NXC_MEMCPY, NXC_MEMSET, NXC_SYNC, NXC_RUNTIME, NXC_DRIVER };

/* One recorded activity, copied out of the CUPTI buffer. */
struct nxc_rec {
	uint64_t start, end;
	uint32_t corr, device, context, stream;
	uint32_t channel, channel_type;		/* channel_type 0: not reported */
	uint32_t tid, pid, cbid;
	uint64_t bytes;
	uint64_t event_sync;			/* sync records: cudaEventSyncId */
	uint32_t grid[3], block[3];
	uint8_t kind, subkind;			/* memcpy kind, sync type */
	const char *name;			/* interned */
};

/* A cudaEventRecord, for cross-stream waits. */
struct nxc_event {
	uint64_t sync_id;
	uint32_t corr, stream, device, context;
};

static struct {
	pthread_mutex_t lock;
	struct nxc_rec *recs;
	size_t n, cap, max;
	struct nxc_event *evs;
	size_t nev, capev;
	uint64_t dropped_ours, dropped_cupti, filtered, buffers;
	uint64_t overhead_ns;
	char **names;
	size_t nnames, capnames;
	bool dev_filter_set;
	uint64_t dev_filter;			/* bit per device ordinal < 64 */
	bool started, finished;
	uint64_t sync_cupti[2];
	int64_t sync_real[2], sync_mono[2];
} g = { .lock = PTHREAD_MUTEX_INITIALIZER };

static int64_t
nxc_clock(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Intern a name (kernel names live only as long as CUPTI's buffer). */
static const char *
nxc_intern(const char *s)
{
	size_t i;
	char *copy, **grown;

	if (!s)
		return "?";
	for (i = g.nnames; i > 0 && i + 64 > g.nnames; i--)
		if (!strcmp(g.names[i - 1], s))
			return g.names[i - 1];
	for (i = 0; i < g.nnames; i++)
		if (!strcmp(g.names[i], s))
			return g.names[i];
	if (g.nnames == g.capnames) {
		grown = realloc(g.names, (g.capnames ? g.capnames * 2 : 256) * sizeof(*g.names));
		if (!grown)
			return "?";
		g.names = grown;
		g.capnames = g.capnames ? g.capnames * 2 : 256;
	}
	copy = strdup(s);
	if (!copy)
		return "?";
	g.names[g.nnames++] = copy;
	return copy;
}

static struct nxc_rec *
nxc_new_rec(uint32_t device, bool has_device)
{
	struct nxc_rec *r, *grown;

	if (has_device && g.dev_filter_set && (device >= 64 || !(g.dev_filter >> device & 1))) {
		g.filtered++;
		return NULL;
	}
	if (g.max && g.n >= g.max) {
		g.dropped_ours++;
		return NULL;
	}
	if (g.n == g.cap) {
		size_t cap = g.cap ? g.cap * 2 : 65536;

		grown = realloc(g.recs, cap * sizeof(*g.recs));
		if (!grown) {
			g.dropped_ours++;
			return NULL;
		}
		g.recs = grown;
		g.cap = cap;
	}
	r = &g.recs[g.n++];
	memset(r, 0, sizeof(*r));
	return r;
}

static void
nxc_take(CUpti_Activity *a)
{
	struct nxc_rec *r;
	const char *name = NULL;

	switch (a->kind) {
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
	case CUPTI_ACTIVITY_KIND_KERNEL: {
		CUpti_ActivityKernel10 *k = (CUpti_ActivityKernel10 *)a;

		r = nxc_new_rec(k->deviceId, true);
		if (!r)
			return;
		r->kind = NXC_KERNEL;
		r->start = k->start;
		r->end = k->end;
		r->corr = k->correlationId;
		r->device = k->deviceId;
		r->context = k->contextId;
		r->stream = k->streamId;
		r->channel = k->channelID;
		r->channel_type = k->channelType;
		r->grid[0] = k->gridX; r->grid[1] = k->gridY; r->grid[2] = k->gridZ;
		r->block[0] = k->blockX; r->block[1] = k->blockY; r->block[2] = k->blockZ;
		r->name = nxc_intern(k->name);
		break;
	}
	case CUPTI_ACTIVITY_KIND_MEMCPY: {
		CUpti_ActivityMemcpy6 *m = (CUpti_ActivityMemcpy6 *)a;

		r = nxc_new_rec(m->deviceId, true);
		if (!r)
			return;
		r->kind = NXC_MEMCPY;
		r->subkind = m->copyKind;
		r->start = m->start;
		r->end = m->end;
		r->corr = m->correlationId;
		r->device = m->deviceId;
		r->context = m->contextId;
		r->stream = m->streamId;
		r->channel = m->channelID;
		r->channel_type = m->channelType;
		r->bytes = m->bytes;
		switch (m->copyKind) {
		case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD: name = "Memcpy HtoD"; break;
		case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH: name = "Memcpy DtoH"; break;
		case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD: name = "Memcpy DtoD"; break;
		case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP: name = "Memcpy PtoP"; break;
		default: name = "Memcpy"; break;
		}
		r->name = name;
		break;
	}
	case CUPTI_ACTIVITY_KIND_MEMSET: {
		CUpti_ActivityMemset4 *m = (CUpti_ActivityMemset4 *)a;

		r = nxc_new_rec(m->deviceId, true);
		if (!r)
			return;
		r->kind = NXC_MEMSET;
		r->start = m->start;
		r->end = m->end;
		r->corr = m->correlationId;
		r->device = m->deviceId;
		r->context = m->contextId;
		r->stream = m->streamId;
		r->channel = m->channelID;
		r->channel_type = m->channelType;
		r->bytes = m->bytes;
		r->name = "Memset";
		break;
	}
	case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
		CUpti_ActivitySynchronization2 *s = (CUpti_ActivitySynchronization2 *)a;

		r = nxc_new_rec(0, false);
		if (!r)
			return;
		r->kind = NXC_SYNC;
		r->subkind = s->type;
		r->start = s->start;
		r->end = s->end;
		r->corr = s->correlationId;
		r->context = s->contextId;
		r->stream = s->streamId;
		r->event_sync = s->cudaEventSyncId;
		switch (s->type) {
		case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE:
			name = "Event sync";
			break;
		case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT:
			name = "Stream wait event";
			break;
		case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE:
			name = "Stream sync";
			break;
		case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE:
			name = "Context sync";
			break;
		default: name = "Sync"; break;
		}
		r->name = name;
		break;
	}
	case CUPTI_ACTIVITY_KIND_CUDA_EVENT: {
		CUpti_ActivityCudaEvent2 *e = (CUpti_ActivityCudaEvent2 *)a;
		struct nxc_event *grown;

		if (g.nev == g.capev) {
			size_t cap = g.capev ? g.capev * 2 : 1024;

			grown = realloc(g.evs, cap * sizeof(*g.evs));
			if (!grown) {
				g.dropped_ours++;
				return;
			}
			g.evs = grown;
			g.capev = cap;
		}
		g.evs[g.nev].sync_id = e->cudaEventSyncId;
		g.evs[g.nev].corr = e->correlationId;
		g.evs[g.nev].stream = e->streamId;
		g.evs[g.nev].device = e->deviceId;
		g.evs[g.nev].context = e->contextId;
		g.nev++;
		break;
	}
	case CUPTI_ACTIVITY_KIND_RUNTIME:
	case CUPTI_ACTIVITY_KIND_DRIVER: {
		CUpti_ActivityAPI *api = (CUpti_ActivityAPI *)a;

		r = nxc_new_rec(0, false);
		if (!r)
			return;
		r->kind = a->kind == CUPTI_ACTIVITY_KIND_RUNTIME ? NXC_RUNTIME : NXC_DRIVER;
		r->start = api->start;
		r->end = api->end;
		r->corr = api->correlationId;
		r->pid = api->processId;
		r->tid = api->threadId;
		r->cbid = api->cbid;
		if (cuptiGetCallbackName(a->kind == CUPTI_ACTIVITY_KIND_RUNTIME ?
					 CUPTI_CB_DOMAIN_RUNTIME_API : CUPTI_CB_DOMAIN_DRIVER_API,
					 api->cbid, &name) != CUPTI_SUCCESS)
			name = NULL;
		r->name = nxc_intern(name ? name : "cuda API");
		break;
	}
	default:
		break;
	}
}

static void CUPTIAPI
nxc_buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
	*buffer = aligned_alloc(8, NXC_BUF_SIZE);
	*size = *buffer ? NXC_BUF_SIZE : 0;
	*max_records = 0;
}

static void CUPTIAPI
nxc_buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
		     size_t valid)
{
	CUpti_Activity *a = NULL;
	size_t dropped = 0;
	int64_t t0 = nxc_clock(CLOCK_MONOTONIC);

	pthread_mutex_lock(&g.lock);
	g.buffers++;
	while (valid && cuptiActivityGetNextRecord(buffer, valid, &a) == CUPTI_SUCCESS)
		nxc_take(a);
	if (cuptiActivityGetNumDroppedRecords(ctx, stream, &dropped) == CUPTI_SUCCESS)
		g.dropped_cupti += dropped;
	g.overhead_ns += nxc_clock(CLOCK_MONOTONIC) - t0;
	pthread_mutex_unlock(&g.lock);
	free(buffer);
}

/* ---- output ---- */

static void
nxc_json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static bool
nxc_on_device(const struct nxc_rec *r)
{
	return r->kind == NXC_KERNEL || r->kind == NXC_MEMCPY || r->kind == NXC_MEMSET;
}

static void
nxc_row(const struct nxc_rec *r, char *tid, size_t len)
{
	if (r->channel_type)
		snprintf(tid, len, "channel %u.%u", r->channel_type, r->channel);
	else
		snprintf(tid, len, "stream %u", r->stream);
}

static void
nxc_ts(FILE *f, const char *key, uint64_t t, uint64_t base)
{
	uint64_t d = t >= base ? t - base : 0;

	fprintf(f, ",\"%s\":%" PRIu64 ".%03" PRIu64, key, d / 1000, d % 1000);
}

static int
nxc_cmp_corr(const void *a, const void *b)
{
	const struct nxc_rec *x = *(struct nxc_rec *const *)a, *y = *(struct nxc_rec *const *)b;

	if (x->context != y->context)
		return x->context < y->context ? -1 : 1;
	if (x->stream != y->stream)
		return x->stream < y->stream ? -1 : 1;
	return x->corr < y->corr ? -1 : x->corr > y->corr;
}

/* The device operation on (context, stream) issued last before @corr
 * (@after false) or first after it (@after true), from @ops sorted by
 * context, stream, correlation id. */
static const struct nxc_rec *
nxc_find_op(struct nxc_rec **ops, size_t n, uint32_t context, uint32_t stream, uint32_t corr,
	    bool after)
{
	size_t lo = 0, hi = n, mid;
	struct nxc_rec key = { .context = context, .stream = stream, .corr = corr };
	const struct nxc_rec *kp = &key;

	while (lo < hi) {
		mid = (lo + hi) / 2;
		if (nxc_cmp_corr(&ops[mid], &kp) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (after) {
		while (lo < n && ops[lo]->context == context && ops[lo]->stream == stream &&
		       ops[lo]->corr <= corr)
			lo++;
		if (lo < n && ops[lo]->context == context && ops[lo]->stream == stream)
			return ops[lo];
		return NULL;
	}
	if (lo > 0 && ops[lo - 1]->context == context && ops[lo - 1]->stream == stream)
		return ops[lo - 1];
	return NULL;
}

static uint32_t
nxc_device_of_context(uint32_t context)
{
	size_t i;

	for (i = 0; i < g.n; i++)
		if (nxc_on_device(&g.recs[i]) && g.recs[i].context == context)
			return g.recs[i].device;
	return 0;
}

static void
nxc_write(const char *path)
{
	char tmp[4200], tid[64], *stats;
	FILE *f;
	size_t i, nops = 0, nflows = 0, norder = 0, j;
	struct nxc_rec **ops = NULL, **api_by_corr = NULL;
	uint64_t base = UINT64_MAX;
	uint32_t max_corr = 0;
	bool first = true;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f)
		return;
	for (i = 0; i < g.n; i++) {
		if (g.recs[i].start && g.recs[i].start < base)
			base = g.recs[i].start;
		if (g.recs[i].corr > max_corr)
			max_corr = g.recs[i].corr;
		nops += nxc_on_device(&g.recs[i]);
	}
	if (base == UINT64_MAX)
		base = 0;
	ops = calloc(nops + 1, sizeof(*ops));
	api_by_corr = calloc((size_t)max_corr + 1, sizeof(*api_by_corr));
	for (i = 0, j = 0; i < g.n; i++) {
		struct nxc_rec *r = &g.recs[i];

		if (nxc_on_device(r) && ops)
			ops[j++] = r;
		/* Prefer the runtime call; a driver call only when alone. */
		if ((r->kind == NXC_RUNTIME || r->kind == NXC_DRIVER) && api_by_corr &&
		    (!api_by_corr[r->corr] || r->kind == NXC_RUNTIME))
			api_by_corr[r->corr] = r;
	}
	if (ops)
		qsort(ops, nops, sizeof(*ops), nxc_cmp_corr);

	fprintf(f, "{\"schemaVersion\":1,\"displayTimeUnit\":\"ns\",\"baseTimeNanoseconds\":%"
		PRIu64 ",\n\"nxClockSync\":{\"cupti_ns\":[%" PRIu64 ",%" PRIu64 "],"
		"\"realtime_ns\":[%" PRId64 ",%" PRId64 "],\"monotonic_ns\":[%" PRId64 ",%" PRId64
		"]},\n\"traceEvents\":[\n", base, g.sync_cupti[0], g.sync_cupti[1], g.sync_real[0],
		g.sync_real[1], g.sync_mono[0], g.sync_mono[1]);
	for (i = 0; i < g.n; i++) {
		const struct nxc_rec *r = &g.recs[i];
		static const char *const cats[] = { "kernel", "gpu_memcpy", "gpu_memset",
						    "cuda_sync", "cuda_runtime", "cuda_driver" };

		fprintf(f, "%s{\"ph\":\"X\",\"cat\":\"%s\",\"name\":", first ? "" : ",\n",
			cats[r->kind]);
		first = false;
		nxc_json_str(f, r->name);
		if (nxc_on_device(r)) {
			nxc_row(r, tid, sizeof(tid));
			fprintf(f, ",\"pid\":\"GPU %u\",\"tid\":\"%s\"", r->device, tid);
		} else if (r->kind == NXC_SYNC) {
			fprintf(f, ",\"pid\":\"GPU %u\",\"tid\":\"sync stream %u\"",
				nxc_device_of_context(r->context), r->stream);
		} else {
			fprintf(f, ",\"pid\":%u,\"tid\":%u", r->pid, r->tid);
		}
		nxc_ts(f, "ts", r->start, base);
		nxc_ts(f, "dur", r->end >= r->start ? r->end - r->start + base : base, base);
		fprintf(f, ",\"args\":{\"correlation\":%u", r->corr);
		if (nxc_on_device(r))
			fprintf(f, ",\"device\":%u,\"context\":%u,\"stream\":%u", r->device,
				r->context, r->stream);
		if (r->channel_type)
			fprintf(f, ",\"channel\":%u,\"channel_type\":%u", r->channel,
				r->channel_type);
		if (r->kind == NXC_KERNEL)
			fprintf(f, ",\"grid\":[%u,%u,%u],\"block\":[%u,%u,%u]", r->grid[0],
				r->grid[1], r->grid[2], r->block[0], r->block[1], r->block[2]);
		if (r->bytes)
			fprintf(f, ",\"bytes\":%" PRIu64, r->bytes);
		if (r->kind == NXC_RUNTIME || r->kind == NXC_DRIVER)
			fprintf(f, ",\"cbid\":%u", r->cbid);
		fprintf(f, "}}");

		/* Launch -> operation flow by correlation id. */
		if (nxc_on_device(r) && api_by_corr && api_by_corr[r->corr]) {
			const struct nxc_rec *l = api_by_corr[r->corr];

			fprintf(f, ",\n{\"ph\":\"s\",\"cat\":\"ac2g\",\"name\":\"launch\","
				"\"id\":%u,\"pid\":%u,\"tid\":%u", r->corr, l->pid, l->tid);
			nxc_ts(f, "ts", l->start, base);
			fprintf(f, "},\n{\"ph\":\"f\",\"bp\":\"e\",\"cat\":\"ac2g\","
				"\"name\":\"launch\",\"id\":%u,\"pid\":\"GPU %u\",\"tid\":\"%s\"",
				r->corr, r->device, tid);
			nxc_ts(f, "ts", r->start, base);
			fprintf(f, "}");
			nflows++;
		}
	}
	/* Cross-stream event waits -> order flows. */
	for (i = 0; i < g.n && ops; i++) {
		const struct nxc_rec *w = &g.recs[i], *src, *dst;

		if (w->kind != NXC_SYNC ||
		    w->subkind != CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT)
			continue;
		for (j = g.nev; j > 0; j--)
			if (g.evs[j - 1].sync_id == w->event_sync && g.evs[j - 1].corr < w->corr)
				break;
		if (!j || g.evs[j - 1].stream == w->stream)
			continue;
		src = nxc_find_op(ops, nops, g.evs[j - 1].context, g.evs[j - 1].stream,
				  g.evs[j - 1].corr, false);
		dst = nxc_find_op(ops, nops, w->context, w->stream, w->corr, true);
		if (!src || !dst)
			continue;
		nxc_row(src, tid, sizeof(tid));
		fprintf(f, ",\n{\"ph\":\"s\",\"cat\":\"nx.order\",\"name\":\"event wait\","
			"\"id\":\"w%u\",\"pid\":\"GPU %u\",\"tid\":\"%s\"", w->corr,
			src->device, tid);
		nxc_ts(f, "ts", src->start, base);
		nxc_row(dst, tid, sizeof(tid));
		fprintf(f, "},\n{\"ph\":\"f\",\"bp\":\"e\",\"cat\":\"nx.order\","
			"\"name\":\"event wait\",\"id\":\"w%u\",\"pid\":\"GPU %u\","
			"\"tid\":\"%s\"", w->corr, dst->device, tid);
		nxc_ts(f, "ts", dst->start, base);
		fprintf(f, "}");
		norder++;
	}
	fprintf(f, "\n]}\n");
	free(ops);
	free(api_by_corr);
	if (fclose(f) == 0)
		rename(tmp, path);

	/* Statistics beside the trace. */
	stats = strrchr(tmp, '/');
	snprintf(stats ? stats + 1 : tmp, sizeof(tmp) - (stats ? (size_t)(stats + 1 - tmp) : 0),
		 "cupti-stats.json");
	f = fopen(tmp, "w");
	if (!f)
		return;
	fprintf(f, "{\"records\":%zu,\"device_ops\":%zu,\"events\":%zu,\"launch_flows\":%zu,"
		"\"order_edges\":%zu,\"dropped\":%" PRIu64 ",\"dropped_by_cupti\":%" PRIu64
		",\"dropped_by_limit\":%" PRIu64 ",\"filtered\":%" PRIu64 ",\"buffers\":%" PRIu64
		",\"overhead_ns\":%" PRIu64 ",\"max_events\":%zu,\"base_ns\":%" PRIu64
		",\n\"clock\":{\"start\":{\"cupti_ns\":%" PRIu64 ",\"realtime_ns\":%" PRId64
		",\"monotonic_ns\":%" PRId64 "},\"end\":{\"cupti_ns\":%" PRIu64
		",\"realtime_ns\":%" PRId64 ",\"monotonic_ns\":%" PRId64 "}}}\n", g.n, nops, g.nev,
		nflows, norder, g.dropped_cupti + g.dropped_ours, g.dropped_cupti, g.dropped_ours,
		g.filtered, g.buffers, g.overhead_ns, g.max, base, g.sync_cupti[0], g.sync_real[0],
		g.sync_mono[0], g.sync_cupti[1], g.sync_real[1], g.sync_mono[1]);
	fclose(f);
}

static void
nxc_finish(void)
{
	const char *out = getenv("NX_CUPTI_OUTPUT"), *dir = getenv("NX_CAPTURE_DIR");
	char path[4096];
	int64_t t0;

	if (!g.started || g.finished)
		return;
	g.finished = true;
	t0 = nxc_clock(CLOCK_MONOTONIC);
	cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	pthread_mutex_lock(&g.lock);
	cuptiGetTimestamp(&g.sync_cupti[1]);
	g.sync_real[1] = nxc_clock(CLOCK_REALTIME);
	g.sync_mono[1] = nxc_clock(CLOCK_MONOTONIC);
	if (out && *out)
		snprintf(path, sizeof(path), "%s", out);
	else
		snprintf(path, sizeof(path), "%s/kernel/cupti.json", dir && *dir ? dir : ".");
	g.overhead_ns += nxc_clock(CLOCK_MONOTONIC) - t0;
	nxc_write(path);
	pthread_mutex_unlock(&g.lock);
}

/* "0,2,4-7" -> bit set. */
static void
nxc_parse_filter(const char *s)
{
	char *end;
	unsigned long a, b;

	if (!s || !*s)
		return;
	g.dev_filter_set = true;
	while (*s) {
		a = strtoul(s, &end, 10);
		b = a;
		if (*end == '-')
			b = strtoul(end + 1, &end, 10);
		for (; a <= b && a < 64; a++)
			g.dev_filter |= 1ull << a;
		s = *end == ',' ? end + 1 : end;
		if (end == s && *s != ',' && *s)
			break;
	}
}

NXC_EXPORT int InitializeInjection(void);

int
InitializeInjection(void)
{
	static const CUpti_ActivityKind kinds[] = {
		CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
		CUPTI_ACTIVITY_KIND_MEMSET, CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
		CUPTI_ACTIVITY_KIND_CUDA_EVENT, CUPTI_ACTIVITY_KIND_RUNTIME,
		CUPTI_ACTIVITY_KIND_DRIVER,
	};
	const char *max = getenv("NX_MAX_EVENTS");
	size_t i;
	int enabled = 0;

	if (g.started)
		return 1;
	g.max = max ? strtoull(max, NULL, 10) : 0;
	nxc_parse_filter(getenv("NX_DEVICE_FILTER"));
	if (cuptiActivityRegisterCallbacks(nxc_buffer_requested, nxc_buffer_completed) !=
	    CUPTI_SUCCESS) {
		fprintf(stderr, "neuron-explorer: CUPTI collector: cannot register buffers; "
			"the kernel layer is off\n");
		return 0;
	}
	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		enabled += cuptiActivityEnable(kinds[i]) == CUPTI_SUCCESS;
	if (!enabled) {
		fprintf(stderr, "neuron-explorer: CUPTI collector: no activity kind could be enabled "
			"(another profiler in the process?)\n");
		return 0;
	}
	cuptiGetTimestamp(&g.sync_cupti[0]);
	g.sync_real[0] = nxc_clock(CLOCK_REALTIME);
	g.sync_mono[0] = nxc_clock(CLOCK_MONOTONIC);
	g.started = true;
	atexit(nxc_finish);
	return 1;
}
