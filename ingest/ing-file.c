/* SPDX-License-Identifier: MIT */
/*
 * ingest/ing-file.c - the format dispatch: pick a reader by content and run
 * it (ing_file()), or the writer of an export format (ing_export()).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "ingest/ingest.h"
#include "ingest/ntff.h"
#include "ingest/perfetto-int.h"

const char *
ing_format_name(int fmt)
{
	switch (fmt) {
	case ING_FMT_JSON:
		return "json";
	case ING_FMT_PERFETTO:
		return "perfetto";
	case ING_FMT_NTFF:
		return "ntff";
	default:
		return "unknown";
	}
}

/* the index of the first byte at or after @i that is not JSON whitespace */
static size_t
skip_ws(const unsigned char *h, size_t n, size_t i)
{
	while (i < n && (h[i] == ' ' || h[i] == '\t' || h[i] == '\r' || h[i] == '\n'))
		i++;
	return i;
}

/* the index of the first byte after a UTF-8 BOM and whitespace */
static size_t
json_first(const unsigned char *h, size_t n)
{
	return skip_ws(h, n, n >= 3 && h[0] == 0xef && h[1] == 0xbb && h[2] == 0xbf ? 3 : 0);
}

int
ing_detect(const unsigned char *h, size_t n)
{
	size_t i = json_first(h, n), j;

	if (n >= 8 && ntff_is_ntff(h, n))
		return ING_FMT_NTFF;
	/* JSON: an object that opens with a key or closes, or an array that
	 * opens with an object or closes */
	if (i < n && (h[i] == '{' || h[i] == '[')) {
		j = skip_ws(h, n, i + 1);
		if (j == n || (h[i] == '{' && (h[j] == '"' || h[j] == '}')) ||
		    (h[i] == '[' && (h[j] == '{' || h[j] == ']')))
			return ING_FMT_JSON;
		return ING_FMT_UNKNOWN;
	}
	if (pf_sniff(h, n))
		return ING_FMT_PERFETTO;
	return ING_FMT_UNKNOWN;
}

void
ing_detect_why(const unsigned char *h, size_t n, char *buf, size_t len)
{
	size_t i = json_first(h, n), j;

	if (i < n && (h[i] == '{' || h[i] == '[') && (j = skip_ws(h, n, i + 1)) < n) {
		snprintf(buf, len, "it opens like JSON, but byte 0x%02x at offset %zu cannot start %s",
			 h[j], j, h[i] == '{' ? "a trace object (a key or })" :
			 "a trace array (an event object or ])");
	} else if (n && h[0] == 0x0a && !(i < n && h[i] >= 0x20 && h[i] < 0x7f)) {
		/* (a newline, then text: a text file, said below) */
		snprintf(buf, len, "it opens like a Perfetto packet (0x0a at offset 0), but its "
			 "first %zu bytes are not well-formed protobuf packets", n);
	} else if (i < n && h[i] != '{' && h[i] != '[') {
		snprintf(buf, len, "first byte 0x%02x at offset %zu", h[i], i);
	} else {
		snprintf(buf, len, "nothing to tell from its first %zu bytes", n);
	}
}

int
ing_file(struct st_writer *w, const char *path, const struct ing_opts *opts,
	 struct tc_err *err)
{
	unsigned char head[64];
	struct tc_input *in = NULL;
	long n;
	int rc, fmt;

	rc = tc_input_open(&in, path, err);
	if (rc < 0)
		return rc;
	n = tc_input_read(in, head, sizeof(head), err);
	if (n < 0) {
		rc = (int)n;
		goto out;
	}
	if (n == 0) {
		rc = tc_err_set(err, -EINVAL, "%s: empty file, not a trace", path);
		goto out;
	}
	fmt = ing_detect(head, (size_t)n);
	tc_input_close(in);
	in = NULL;
	st_writer_set_meta(w, "format", ing_format_name(fmt));
	switch (fmt) {
	case ING_FMT_NTFF:
		rc = ing_ntff_read(w, path, opts, err);
		break;
	case ING_FMT_JSON:
	case ING_FMT_PERFETTO:
		rc = tc_input_open(&in, path, err);
		if (rc < 0)
			break;
		rc = fmt == ING_FMT_JSON ? ing_json_read(w, in, opts, err)
					 : ing_perfetto_read(w, in, opts, err);
		break;
	default: {
		char why[160];

		ing_detect_why(head, (size_t)n, why, sizeof(why));
		rc = tc_err_set(err, -EINVAL, "%s: not a trace: expected Chrome/Kineto JSON,"
				" Perfetto protobuf or .ntff (%s)", path, why);
	}
	}
out:
	tc_input_close(in);
	return rc;
}

int
ing_export(sqlite3 *db, int format, FILE *out, const char *out_name, struct tc_err *err)
{
	switch (format) {
	case ING_EXPORT_PFTRACE:
		return pf_export_pftrace(db, out, out_name, err);
	case ING_EXPORT_JSON:
		return ing_json_export(db, out, out_name, err);
	}
	return tc_err_set(err, -EINVAL, "%s: no such export format", out_name);
}
