/* SPDX-License-Identifier: MIT */
/*
 * ingest/ing-ntff.c - ingest a .ntff run container: every trace-data
 * section (Perfetto, Chrome/Kineto JSON) goes into the same store, shifted by
 * its layer's clock offset from the manifest; the manifest itself is kept in
 * meta "manifest" and damaged sections in meta "warnings".
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "common/tc-json.h"
#include "store/library.h"
#include "ingest/ingest.h"
#include "ingest/ntff.h"

/* The layer that produced section @name, per the manifest's "sections" list. */
static const char *
ntff_layer_of(json_t *manifest, const char *name)
{
	json_t *secs = json_object_get(manifest, "sections"), *s, *layers;
	size_t i;
	const char *lname;
	json_t *l;

	json_array_foreach(secs, i, s) {
		const char *n = json_string_value(json_object_get(s, "name"));

		if (n && !strcmp(n, name))
			return json_string_value(json_object_get(s, "layer"));
	}
	/* or a layer that lists the section by name */
	layers = json_object_get(manifest, "layers");
	json_object_foreach(layers, lname, l) {
		json_t *ls = json_object_get(l, "sections");

		json_array_foreach(ls, i, s)
			if (json_is_string(s) && !strcmp(json_string_value(s), name))
				return lname;
	}
	return NULL;
}

/*
 * The clock offset (ns) to add to the timestamps of section @name:
 * layers.<layer>.clock_offset_ns, else clock.<layer>.offset_ns, else 0.
 */
static int64_t
ntff_offset_of(json_t *manifest, const char *name)
{
	const char *layer = manifest ? ntff_layer_of(manifest, name) : NULL;
	json_t *v;

	if (!layer)
		return 0;
	v = json_object_get(json_object_get(json_object_get(manifest, "layers"), layer),
			    "clock_offset_ns");
	if (json_is_integer(v))
		return json_integer_value(v);
	v = json_object_get(json_object_get(json_object_get(manifest, "clock"), layer), "offset_ns");
	if (json_is_integer(v))
		return json_integer_value(v);
	return 0;
}

static void
ntff_warn(json_t *warnings, const char *msg)
{
	json_array_append_new(warnings, tc_json_str(msg));	/* it may quote a section's name */
}

int
ing_ntff_read(struct st_writer *w, const char *path, const struct ing_opts *opts,
	      struct tc_err *err)
{
	struct ntff_reader *r = NULL;
	struct ing_opts o = { 0 };
	json_t *manifest = NULL, *warnings = json_array();
	size_t i, n, loaded = 0, data_secs = 0;
	char *txt;
	int ret, mi;

	if (opts)
		o = *opts;
	ret = ntff_open(&r, path, err);
	if (ret < 0)
		goto out;
	n = ntff_count(r);
	if (ntff_damage(r))
		ntff_warn(warnings, ntff_damage(r));

	/* The manifest first (it is usually the last section written). */
	mi = ntff_find(r, "manifest.json");
	for (i = 0; mi < 0 && i < n; i++)
		if (ntff_section(r, i)->kind == NTFF_SEC_MANIFEST)
			mi = (int)i;
	if (mi >= 0) {
		struct tc_err e = { 0 };
		void *data;
		size_t len;
		json_error_t je;

		if (ntff_read(r, (size_t)mi, &data, &len, &e) < 0) {
			ntff_warn(warnings, e.msg);
		} else {
			manifest = json_loadb(data, len, 0, &je);
			if (!manifest || !json_is_object(manifest)) {
				char *m = tc_xasprintf("%s: manifest is not a JSON object: %s", path,
						       je.text);

				ntff_warn(warnings, m);
				free(m);
				json_decref(manifest);
				manifest = NULL;
			} else {
				txt = json_dumps(manifest, JSON_COMPACT);
				st_writer_set_meta(w, "manifest", txt);
				free(txt);
			}
			free(data);
		}
	} else {
		ntff_warn(warnings, "no manifest section");
	}

	for (i = 0; i < n; i++) {
		const struct ntff_section *s = ntff_section(r, i);
		struct tc_input *in = NULL;
		struct tc_err e = { 0 };
		const void *data = NULL;
		void *map = NULL;
		size_t len;
		int rc;

		if (s->kind != NTFF_SEC_PERFETTO && s->kind != NTFF_SEC_JSON)
			continue;
		data_secs++;
		/* mapped, not read into memory: trace sections can be gigabytes */
		rc = ntff_map(r, i, &data, &len, &map, &e);
		if (rc == 0)
			rc = tc_input_open_mem(&in, data, len, s->name, &e);
		if (rc == 0) {
			o.ts_offset_ns = (opts ? opts->ts_offset_ns : 0) +
					 ntff_offset_of(manifest, s->name);
			rc = s->kind == NTFF_SEC_PERFETTO ? ing_perfetto_read(w, in, &o, &e)
							  : ing_json_read(w, in, &o, &e);
		}
		tc_input_close(in);
		ntff_unmap(map);
		if (rc == -ECANCELED) {
			/* asked for, not a damaged section: stop here */
			ret = tc_err_set(err, rc, "%s", e.msg);
			goto out;
		}
		if (rc < 0 && i + 1 == n && ntff_damage_listed(r))
			continue;	/* the scan's warning above names it already */
		if (rc < 0) {
			char *m = tc_xasprintf("section \"%s\" (%s) at byte %" PRIu64 ": %s", s->name,
					       ntff_kind_name(s->kind), s->offset, e.msg);

			ntff_warn(warnings, m);
			free(m);
			continue;
		}
		loaded++;
	}
	if (json_array_size(warnings)) {
		txt = json_dumps(warnings, JSON_COMPACT);
		st_writer_set_meta(w, "warnings", txt);
		free(txt);
	}
	st_writer_set_meta(w, "format", "ntff");
	if (!loaded) {
		const char *why = json_array_size(warnings) ?
				  json_string_value(json_array_get(warnings, 0)) : NULL;

		ret = tc_err_set(err, -EINVAL, "%s: no trace data loaded (%zu trace section%s)%s%s",
				 path, data_secs, data_secs == 1 ? "" : "s", why ? ": " : "",
				 why ? why : "");
	}
out:
	json_decref(manifest);
	json_decref(warnings);
	ntff_close(r);
	return ret;
}
