/* SPDX-License-Identifier: MIT */
/*
 * ingest/ing-json-scan.c - the streaming top-level scanner of a Chrome trace.
 * It walks the Array form `[ev, ...]` or the Object form
 * `{"traceEvents": [...], other keys before or after}` chunk by chunk and
 * hands out each event's complete text.  An event lying inside one chunk is
 * passed in place; one crossing a chunk boundary is carried in a buffer, so
 * memory stays bounded by the largest event, not the file.  Only structure is
 * tracked here (depth, strings); the event parser validates each span.
 */
#include <errno.h>
#include <string.h>
#include "ingest/json-int.h"

enum {
	S_START,	/* before the top-level value */
	S_OBJ_KEY0,	/* after '{': a key or '}' */
	S_OBJ_KEY,	/* after ',': a key (or '}', tolerated) */
	S_OBJ_COLON,
	S_OBJ_VAL,
	S_OBJ_NEXT,	/* after a member: ',' or '}' */
	S_ARR_ELEM0,	/* after '[': an element or ']' */
	S_ARR_ELEM,	/* after ',': an element (or ']', tolerated) */
	S_ARR_NEXT,	/* after an element: ',' or ']' */
	S_CAPTURE,	/* inside a value being captured */
	S_END,		/* after the top-level value */
};

enum { CAP_KEY, CAP_META, CAP_EVENT };
enum { MODE_CONTAINER, MODE_STRING, MODE_SCALAR };

void
ij_scan_init(struct ij_scan *s, const struct ij_scan_ops *ops, void *ctx, const char *name)
{
	memset(s, 0, sizeof(*s));
	s->ops = ops;
	s->ctx = ctx;
	s->name = name;
	s->state = S_START;
	tc_buf_init(&s->carry);
	tc_buf_init(&s->key);
}

void
ij_scan_free(struct ij_scan *s)
{
	if (!s)
		return;
	tc_buf_free(&s->carry);
	tc_buf_free(&s->key);
}

static bool
is_ws(char c)
{
	return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

/* A syntax error at the current byte, @c. */
static int
bad(struct ij_scan *s, const char *what, char c, struct tc_err *err)
{
	uint64_t off = s->off;

	if (c >= 0x20 && c < 0x7f)
		return tc_err_set(err, -EINVAL, "%s: byte %llu: %s (found '%c')", s->name,
				  (unsigned long long)off, what, c);
	return tc_err_set(err, -EINVAL, "%s: byte %llu: %s (found byte 0x%02x)", s->name,
			  (unsigned long long)off, what, (unsigned char)c);
}

/* A capture finished: [p, p+n) is its whole text. */
static int
captured(struct ij_scan *s, const char *p, size_t n, struct tc_err *err)
{
	int ret = 0;

	switch (s->cap_kind) {
	case CAP_KEY:
		tc_buf_reset(&s->key);
		/* p/n include the quotes. */
		tc_buf_add(&s->key, p + 1, n - 2);
		s->state = S_OBJ_COLON;
		break;
	case CAP_META:
		if (s->ops->meta)
			ret = s->ops->meta(s->ctx, s->key.data, s->key.len,
					   s->cap_over ? NULL : p, s->cap_over ? 0 : n, s->cap_off);
		s->state = S_OBJ_NEXT;
		break;
	case CAP_EVENT:
		if (s->ops->event)
			ret = s->ops->event(s->ctx, p, n, s->events, s->cap_off);
		s->events++;
		s->state = S_ARR_NEXT;
		break;
	}
	if (ret < 0 && err && !err->code)
		tc_err_set(err, ret, "%s: byte %llu: stopped", s->name,
			   (unsigned long long)s->cap_off);
	return ret < 0 ? ret : 0;
}

static void
begin_capture(struct ij_scan *s, int kind, char c, uint64_t off)
{
	s->cap_kind = kind;
	s->cap_off = off;
	s->cap_over = false;
	s->in_str = false;
	s->esc = false;
	s->depth = 0;
	tc_buf_reset(&s->carry);
	/* The first byte is left for capture_run() to see. */
	if (c == '{' || c == '[') {
		s->cap_mode = MODE_CONTAINER;
	} else if (c == '"') {
		s->cap_mode = MODE_STRING;
	} else {
		s->cap_mode = MODE_SCALAR;
	}
	s->state = S_CAPTURE;
}

/*
 * Advance the running capture over buf[i..n).  Returns the index just after
 * the value when it ended inside this chunk, or n when it continues.
 */
static size_t
capture_run(struct ij_scan *s, const char *buf, size_t i, size_t n, bool *done)
{
	bool in_str = s->in_str, esc = s->esc;
	int depth = s->depth;
	char c;

	*done = false;
	if (s->cap_mode == MODE_SCALAR) {
		while (i < n) {
			c = buf[i];
			if (is_ws(c) || c == ',' || c == ']' || c == '}' || c == '{' || c == '[' ||
			    c == '"' || c == ':') {
				*done = true;
				return i;
			}
			i++;
		}
		return n;
	}
	while (i < n) {
		if (in_str) {
			if (esc) {
				esc = false;
				i++;
				continue;
			}
			/* Fast skip to the next quote or backslash. */
			while (i < n && buf[i] != '"' && buf[i] != '\\')
				i++;
			if (i >= n)
				break;
			if (buf[i] == '\\') {
				esc = true;
				i++;
				continue;
			}
			in_str = false;
			i++;
			if (s->cap_mode == MODE_STRING) {
				*done = true;
				break;
			}
			continue;
		}
		c = buf[i++];
		if (c == '"') {
			in_str = true;
		} else if (c == '{' || c == '[') {
			depth++;
		} else if (c == '}' || c == ']') {
			if (--depth == 0) {
				*done = true;
				break;
			}
		}
	}
	s->in_str = in_str;
	s->esc = esc;
	s->depth = depth;
	return i;
}

static size_t
cap_limit(const struct ij_scan *s)
{
	switch (s->cap_kind) {
	case CAP_EVENT: return IJ_EVENT_MAX;
	case CAP_META: return IJ_META_MAX;
	default: return 4096;
	}
}

/*
 * Advance the running capture over buf[i..n): hand the value out when it
 * ends, carry it over when it continues into the next chunk.
 * Return: the index reached, or -errno with @err set.
 */
static long
feed_capture(struct ij_scan *s, const char *buf, size_t i, size_t n, struct tc_err *err)
{
	size_t j;
	bool done;
	int ret = 0;

	j = capture_run(s, buf, i, n, &done);
	if (done && !s->carry.len) {
		ret = captured(s, buf + i, j - i, err);	/* in place: no copy */
	} else {
		if (!s->cap_over && s->carry.len + (j - i) > cap_limit(s)) {
			if (s->cap_kind == CAP_EVENT)
				return tc_err_set(err, -E2BIG,
						  "%s: byte %llu: event %llu is larger than %u MiB",
						  s->name, (unsigned long long)s->cap_off,
						  (unsigned long long)s->events,
						  IJ_EVENT_MAX >> 20);
			if (s->cap_kind == CAP_KEY)
				return tc_err_set(err, -EINVAL,
						  "%s: byte %llu: top-level key too long",
						  s->name, (unsigned long long)s->cap_off);
			s->cap_over = true;	/* metadata too big to keep: skip it */
			tc_buf_reset(&s->carry);
		} else if (!s->cap_over) {
			tc_buf_add(&s->carry, buf + i, j - i);
		}
		if (done) {
			ret = captured(s, s->carry.data, s->carry.len, err);
			tc_buf_reset(&s->carry);
		}
	}
	if (ret < 0)
		return ret;
	s->off += j - i;
	return (long)j;
}

int
ij_scan_feed(struct ij_scan *s, const char *buf, size_t n, struct tc_err *err)
{
	size_t i = 0;
	long j;
	char c;

	while (i < n) {
		if (s->state == S_CAPTURE) {
			j = feed_capture(s, buf, i, n, err);
			if (j < 0)
				return (int)j;
			i = (size_t)j;
			continue;
		}
		c = buf[i];
		if (is_ws(c)) {
			i++;
			s->off++;
			continue;
		}
		switch (s->state) {
		case S_START:
			/* A UTF-8 byte order mark, possibly split across chunks. */
			if (s->off < 3 && c == "\xef\xbb\xbf"[s->off]) {
				i++;
				s->off++;
				continue;
			}
			if (c == '[') {
				s->form = IJ_FORM_ARRAY;
				s->saw_events = true;
				s->state = S_ARR_ELEM0;
			} else if (c == '{') {
				s->form = IJ_FORM_OBJECT;
				s->state = S_OBJ_KEY0;
			} else if (c == '"' || c == '-' || (c >= '0' && c <= '9') || c == 't' ||
				   c == 'f' || c == 'n') {
				return bad(s, "wrong top-level shape: a trace is a JSON array "
					   "of events or an object with \"traceEvents\"", c, err);
			} else {
				return bad(s, "not JSON: expected '[' or '{'", c, err);
			}
			break;
		case S_OBJ_KEY0:
		case S_OBJ_KEY:
			if (c == '}') {	/* a trailing comma is tolerated */
				s->state = S_END;
				break;
			}
			if (c != '"')
				return bad(s, "invalid JSON: expected a string key", c, err);
			begin_capture(s, CAP_KEY, c, s->off);
			continue;
		case S_OBJ_COLON:
			if (c != ':')
				return bad(s, "invalid JSON: expected ':'", c, err);
			s->state = S_OBJ_VAL;
			break;
		case S_OBJ_VAL:
			if (s->key.len == 11 && !memcmp(s->key.data, "traceEvents", 11)) {
				if (c != '[')
					return bad(s, "\"traceEvents\" is not an array", c, err);
				if (s->saw_events)
					return bad(s, "\"traceEvents\" appears twice", c, err);
				s->saw_events = true;
				s->state = S_ARR_ELEM0;
				break;
			}
			if (c == ',' || c == '}' || c == ']' || c == ':')
				return bad(s, "invalid JSON: expected a value", c, err);
			begin_capture(s, CAP_META, c, s->off);
			continue;
		case S_OBJ_NEXT:
			if (c == ',')
				s->state = S_OBJ_KEY;
			else if (c == '}')
				s->state = S_END;
			else
				return bad(s, "invalid JSON: expected ',' or '}'", c, err);
			break;
		case S_ARR_ELEM0:
		case S_ARR_ELEM:
			if (c == ']') {	/* empty array, or a tolerated trailing comma */
				s->events_done = true;
				s->state = s->form == IJ_FORM_ARRAY ? S_END : S_OBJ_NEXT;
				break;
			}
			if (c == ',' || c == '}' || c == ':')
				return bad(s, "invalid JSON: expected an event", c, err);
			if (c == '{' && s->ops->event_at) {
				long k = s->ops->event_at(s->ctx, buf + i, n - i, s->events, s->off);

				if (k < 0) {
					if (err && !err->code)
						tc_err_set(err, (int)k, "%s: byte %llu: stopped",
							   s->name, (unsigned long long)s->off);
					return (int)k;
				}
				if (k > 0 && (size_t)k <= n - i) {
					s->events++;
					s->state = S_ARR_NEXT;
					s->off += (uint64_t)k;
					i += (size_t)k;
					continue;
				}
			}
			begin_capture(s, CAP_EVENT, c, s->off);
			continue;
		case S_ARR_NEXT:
			if (c == ',') {
				s->state = S_ARR_ELEM;
			} else if (c == ']') {
				s->events_done = true;
				s->state = s->form == IJ_FORM_ARRAY ? S_END : S_OBJ_NEXT;
			} else {
				return bad(s, "invalid JSON: expected ',' or ']' after an event",
					   c, err);
			}
			break;
		case S_END:
			return bad(s, "invalid JSON: data after the end of the trace", c,
				   err);
		}
		i++;
		s->off++;
	}
	return 0;
}

int
ij_scan_end(struct ij_scan *s, struct tc_err *err)
{
	const char *what;

	if (s->state == S_CAPTURE && s->cap_mode == MODE_SCALAR && s->cap_kind != CAP_KEY) {
		/* A scalar ended by the end of the input. */
		int ret = captured(s, s->carry.data ? s->carry.data : "", s->carry.len, err);

		tc_buf_reset(&s->carry);
		if (ret < 0)
			return ret;
	}
	switch (s->state) {
	case S_END:
		break;
	case S_START:
		return tc_err_set(err, -EINVAL, "%s: byte %llu: empty file, not a trace", s->name,
				  (unsigned long long)s->off);
	case S_ARR_ELEM0:
	case S_ARR_ELEM:
	case S_ARR_NEXT:
		/* catapult appends a missing ']' to the Array form; so do we. */
		if (s->form == IJ_FORM_ARRAY)
			break;
		return tc_err_set(err, -EINVAL,
				  "%s: byte %llu: truncated JSON: \"traceEvents\" array not closed "
				  "after %llu events", s->name, (unsigned long long)s->off,
				  (unsigned long long)s->events);
	case S_CAPTURE:
		what = s->cap_kind == CAP_EVENT ? "event" :
		       s->cap_kind == CAP_KEY ? "key" : "value";
		return tc_err_set(err, -EINVAL,
				  "%s: byte %llu: truncated JSON: %s %s starting at byte %llu is "
				  "not terminated", s->name, (unsigned long long)s->off, what,
				  s->cap_mode == MODE_STRING ? "string" : "object",
				  (unsigned long long)s->cap_off);
	default:
		return tc_err_set(err, -EINVAL, "%s: byte %llu: truncated JSON: the top-level "
				  "object is not closed", s->name, (unsigned long long)s->off);
	}
	if (!s->saw_events)
		return tc_err_set(err, -EINVAL, "%s: byte %llu: not a trace: the JSON object has "
				  "no \"traceEvents\" array", s->name, (unsigned long long)s->off);
	return 0;
}
