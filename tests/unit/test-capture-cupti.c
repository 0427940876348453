/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test-capture-cupti.c - the CUPTI collector's record handling
 * and output without a GPU: activity records built in memory go through
 * the same nxc_take() the buffer callback uses, then nxc_write().  Checks
 * rows (stream vs hardware channel), launch flows by correlation id, the
 * order flow of a cross-stream event wait, the device filter and the event
 * limit.  With an argument, leaves the JSON there for tests/capture/cupti.sh
 * to ingest.
 */
#include "capture/cupti/nx-cupti.c"

#include <jansson.h>
#include "common/tc.h"
#include "tests/tap.h"

static void
api(uint32_t corr, CUpti_ActivityKind kind, uint32_t cbid, uint64_t start, uint64_t end)
{
	CUpti_ActivityAPI a;

	memset(&a, 0, sizeof(a));
	a.kind = kind;
	a.cbid = cbid;
	a.start = start;
	a.end = end;
	a.processId = 100;
	a.threadId = 101;
	a.correlationId = corr;
	nxc_take((CUpti_Activity *)&a);
}

static void
kernel(uint32_t corr, uint32_t device, uint32_t stream, uint32_t chtype, uint32_t ch,
       const char *name, uint64_t start, uint64_t end)
{
	CUpti_ActivityKernel10 k;

	memset(&k, 0, sizeof(k));
	k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
	k.correlationId = corr;
	k.deviceId = device;
	k.contextId = 1;
	k.streamId = stream;
	k.channelType = chtype;
	k.channelID = ch;
	k.start = start;
	k.end = end;
	k.gridX = 4096; k.gridY = 1; k.gridZ = 1;
	k.blockX = 256; k.blockY = 1; k.blockZ = 1;
	k.name = name;
	nxc_take((CUpti_Activity *)&k);
}

/* Find the s/f pair of flow @cat; return the f's tid via @ftid and the s's via @stid. */
static int
flows(json_t *evs, const char *cat, const char **stid, const char **ftid, json_int_t *sts)
{
	size_t i;
	json_t *e;
	int n = 0;

	json_array_foreach(evs, i, e) {
		const char *c = json_string_value(json_object_get(e, "cat"));
		const char *ph = json_string_value(json_object_get(e, "ph"));

		if (!c || strcmp(c, cat))
			continue;
		if (!strcmp(ph, "s")) {
			if (stid)
				*stid = json_string_value(json_object_get(e, "tid"));
			if (sts)
				*sts = (json_int_t)(json_real_value(json_object_get(e, "ts")) * 1000 +
						    0.5);
		} else if (!strcmp(ph, "f")) {
			n++;
			if (ftid)
				*ftid = json_string_value(json_object_get(e, "tid"));
		}
	}
	return n;
}

int
main(int argc, char **argv)
{
	char path[] = "/tmp/nxcupti.XXXXXX", *out, *stats;
	CUpti_ActivityMemcpy6 m;
	CUpti_ActivityCudaEvent2 ev;
	CUpti_ActivitySynchronization2 sy;
	json_t *j, *evs, *st;
	const char *stid = NULL, *ftid = NULL, *name;
	json_int_t sts = 0;
	size_t i;
	json_t *e;
	int fd;

	fd = mkstemp(path);
	if (fd < 0)
		tap_skip_all("mkstemp");
	close(fd);
	out = argc > 1 ? argv[1] : path;
	g.max = 100;
	nxc_parse_filter("0,2-3");
	ok(g.dev_filter == 0xd, "device filter 0,2-3 parsed");

	/* memcpy (corr 1) and kernel (corr 2) on stream 1; event recorded (3);
	 * stream 2 waits for it (4); kernel on stream 2 (5) on a hardware channel. */
	api(1, CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020,
	    1000, 1500);
	memset(&m, 0, sizeof(m));
	m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
	m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
	m.bytes = 4 << 20;
	m.start = 2000;
	m.end = 3000;
	m.deviceId = 0;
	m.contextId = 1;
	m.streamId = 1;
	m.correlationId = 1;
	nxc_take((CUpti_Activity *)&m);
	api(2, CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
	    1600, 1900);
	api(2, CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, 1650, 1850);
	kernel(2, 0, 1, 0, 0, "scale(float*, int, float)", 3100, 9000);
	memset(&ev, 0, sizeof(ev));
	ev.kind = CUPTI_ACTIVITY_KIND_CUDA_EVENT;
	ev.correlationId = 3;
	ev.contextId = 1;
	ev.streamId = 1;
	ev.cudaEventSyncId = 42;
	nxc_take((CUpti_Activity *)&ev);
	memset(&sy, 0, sizeof(sy));
	sy.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
	sy.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT;
	sy.start = 2100;
	sy.end = 2200;
	sy.correlationId = 4;
	sy.contextId = 1;
	sy.streamId = 2;
	sy.cudaEventSyncId = 42;
	nxc_take((CUpti_Activity *)&sy);
	api(5, CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
	    2300, 2400);
	kernel(5, 0, 2, CUPTI_CHANNEL_TYPE_COMPUTE, 7, "add", 9100, 9500);
	/* Filtered out: device 1. */
	kernel(6, 1, 1, 0, 0, "elsewhere", 9600, 9700);
	is_int(g.filtered, 1, "device 1 filtered");
	/* The limit: later records are counted, not kept. */
	g.max = g.n;
	kernel(7, 0, 1, 0, 0, "late", 9800, 9900);
	is_int(g.dropped_ours, 1, "record over NX_MAX_EVENTS dropped and counted");

	nxc_write(out);
	j = json_load_file(out, 0, NULL);
	ok(j != NULL, "valid JSON written");
	evs = json_object_get(j, "traceEvents");
	is_int(json_integer_value(json_object_get(j, "baseTimeNanoseconds")), 1000, "base time");
	is_int(flows(evs, "ac2g", NULL, NULL, NULL), 3, "3 launch flows (memcpy and 2 kernels)");
	is_int(flows(evs, "nx.order", &stid, &ftid, &sts), 1, "1 order flow for the event wait");
	is_str(stid, "stream 1", "order flow starts on the recording stream");
	is_int(sts, 3100 - 1000, "at the kernel issued before cudaEventRecord");
	is_str(ftid, "channel 1.7", "ends on the waiting stream's kernel, on its channel row");
	name = NULL;
	json_array_foreach(evs, i, e)
		if (json_integer_value(json_object_get(json_object_get(e, "args"), "cbid")) ==
		    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000)
			name = json_string_value(json_object_get(e, "name"));
	ok(name && !strncmp(name, "cudaLaunchKernel", 16), "API named by CUPTI: %s",
	   name ? name : "(none)");
	json_array_foreach(evs, i, e) {
		if (!strcmp(json_string_value(json_object_get(e, "name")), "Memcpy HtoD")) {
			is_str(json_string_value(json_object_get(e, "pid")), "GPU 0", "memcpy on GPU 0");
			is_int(json_integer_value(json_object_get(json_object_get(e, "args"),
								  "bytes")), 4 << 20, "memcpy bytes");
		}
	}
	/* The launch flow leaves from the runtime call, not the driver call. */
	json_array_foreach(evs, i, e) {
		const char *c = json_string_value(json_object_get(e, "cat"));

		if (c && !strcmp(c, "ac2g") && json_integer_value(json_object_get(e, "id")) == 2 &&
		    !strcmp(json_string_value(json_object_get(e, "ph")), "s"))
			is_int((json_int_t)(json_real_value(json_object_get(e, "ts")) * 1000 + 0.5),
			       600, "launch flow from the runtime call");
	}
	json_decref(j);

	stats = tc_xasprintf("%.*s/cupti-stats.json", (int)(strrchr(out, '/') - out), out);
	st = json_load_file(stats, 0, NULL);
	ok(st != NULL, "stats written beside the trace");
	is_int(json_integer_value(json_object_get(st, "device_ops")), 3, "stats: device ops");
	is_int(json_integer_value(json_object_get(st, "order_edges")), 1, "stats: order edges");
	is_int(json_integer_value(json_object_get(st, "dropped")), 1, "stats: dropped");
	is_int(json_integer_value(json_object_get(st, "filtered")), 1, "stats: filtered");
	json_decref(st);
	if (argc <= 1) {
		unlink(stats);
		unlink(path);
	}
	free(stats);
	return tap_done();
}
