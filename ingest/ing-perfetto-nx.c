/* SPDX-License-Identifier: MIT */
/*
 * ingest/ing-perfetto-nx.c - reading back what our own Perfetto export adds
 * for us (perfetto-int.h, PF_NX_*): each event's "nx.id" and its "nx.deps"
 * (the edges from it, by kind, with their labels, to other events' nx.id).
 * The reader notes them per event handle as it goes; at the end the ids are
 * matched and the edges added, so a store converted to .pftrace and
 * ingested again has the same edges instead of the flows alone (and no
 * second copy of the edges the analysis would derive again).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "common/tc-sort.h"
#include "store/store.h"
#include "ingest/perfetto-int.h"

struct pf_nx_id {
	int64_t id;		/* nx.id */
	uint64_t handle;	/* the reader's flow handle */
};

struct pf_nx_deps {
	uint64_t handle;
	char *json;		/* malloc'd nx.deps text */
};

struct pf_nx {
	struct pf_nx_id *ids;
	size_t nids, capids;
	struct pf_nx_deps *deps;
	size_t ndeps, capdeps;
};

void
pf_nx_note(struct pf_nx **np, int64_t id, uint64_t handle, const char *deps)
{
	struct pf_nx *n = *np;

	if (!n)
		n = *np = tc_xcalloc(1, sizeof(*n));
	if (n->nids == n->capids) {
		n->capids = n->capids ? n->capids * 2 : 1024;
		n->ids = tc_xrealloc(n->ids, n->capids * sizeof(*n->ids));
	}
	n->ids[n->nids++] = (struct pf_nx_id){ id, handle };
	if (!deps)
		return;
	if (n->ndeps == n->capdeps) {
		n->capdeps = n->capdeps ? n->capdeps * 2 : 256;
		n->deps = tc_xrealloc(n->deps, n->capdeps * sizeof(*n->deps));
	}
	n->deps[n->ndeps++] = (struct pf_nx_deps){ handle, tc_xstrdup(deps) };
}

static int
id_cmp(const void *a, const void *b)
{
	const struct pf_nx_id *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

/* The handle of the event exported as @id, 0 when none. */
static uint64_t
handle_of(const struct pf_nx *n, int64_t id)
{
	size_t lo = TC_LOWER_BOUND(n->nids, m, n->ids[m].id < id);

	return lo < n->nids && n->ids[lo].id == id ? n->ids[lo].handle : 0;
}

int
pf_nx_resolve(struct pf_nx *n, const int64_t *hseq, struct st_writer *w, const char *name)
{
	int rc = 0;

	if (!n)
		return 0;
	if (n->nids)
		qsort(n->ids, n->nids, sizeof(*n->ids), id_cmp);
	for (size_t i = 0; i < n->ndeps && !rc; i++) {
		json_t *arr = json_loads(n->deps[i].json, 0, NULL), *e;
		int64_t src = hseq[n->deps[i].handle];
		size_t k;

		if (!json_is_array(arr)) {
			st_writer_count_bad(w, "%s: " PF_NX_DEPS " is not a JSON array", name);
			json_decref(arr);
			continue;
		}
		json_array_foreach(arr, k, e) {
			json_t *kind = json_object_get(e, "kind"), *dst = json_object_get(e, "dst");
			json_t *label = json_object_get(e, "label");
			int kd = json_is_string(kind) ? st_edge_kind_parse(json_string_value(kind)) : -1;
			uint64_t h = json_is_integer(dst) ? handle_of(n, json_integer_value(dst)) : 0;

			if (kd < 0 || !h || src <= 0 || hseq[h] <= 0) {
				st_writer_count_bad(w, "%s: an " PF_NX_DEPS " edge names no exported "
						    "event or kind", name);
				continue;
			}
			rc = st_edge_add(w, src, hseq[h], kd,
					 json_is_string(label) ? json_string_value(label) : NULL);
			if (rc == -EINVAL)
				rc = 0;	/* src == dst: nothing to keep */
			if (rc)
				break;
		}
		json_decref(arr);
	}
	return rc;
}

void
pf_nx_free(struct pf_nx *n)
{
	if (!n)
		return;
	for (size_t i = 0; i < n->ndeps; i++)
		free(n->deps[i].json);
	free(n->deps);
	free(n->ids);
	free(n);
}
