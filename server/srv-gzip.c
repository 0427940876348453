/* SPDX-License-Identifier: MIT */
/*
 * server/srv-gzip.c - gzip for JSON answers, when the client says it takes
 * it (Accept-Encoding).  A zoomed-out critical path or a timeline of a big
 * trace is megabytes of JSON that compresses about tenfold; on loopback
 * that is nothing, over a laptop's link to the machine next to the
 * accelerator it is most of the wait.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <zlib.h>
#include "server/srv-int.h"

#define SRV_GZIP_MIN 1024	/* smaller answers go as they are */

/*
 * Whether the Accept-Encoding list @ae names gzip (or *) without q=0:
 * "gzip", "gzip, deflate, br", "br;q=1, gzip;q=0.8" yes; "gzip;q=0",
 * "identity" no.
 */
static bool
gzip_accepted(const char *ae)
{
	while (ae && *ae) {
		size_t n;
		const char *q, *end;

		ae += strspn(ae, " \t,");
		n = strcspn(ae, " \t;,");
		end = ae + strcspn(ae, ",");
		if ((n == 4 && !strncasecmp(ae, "gzip", 4)) || (n == 1 && *ae == '*')) {
			q = ae + n;
			while (q < end && (q = strchr(q, ';')) && q < end) {
				q++;
				q += strspn(q, " \t");
				if (!strncasecmp(q, "q=", 2))
					return strtod(q + 2, NULL) > 0;
			}
			return true;
		}
		ae = end;
	}
	return false;
}

void *
srv_gzip(struct srv_req *r, const void *text, size_t len, size_t *out_len)
{
	z_stream z = { 0 };
	uLong cap;
	void *out = NULL;

	if (len < SRV_GZIP_MIN ||
	    !gzip_accepted(MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND,
							"Accept-Encoding")))
		return NULL;
	/* level 1: most of the size for little of the time (docs/benchmarks-server.md) */
	if (len > UINT32_MAX || deflateInit2(&z, 1, Z_DEFLATED, 15 + 16, 8,
					     Z_DEFAULT_STRATEGY) != Z_OK)
		return NULL;
	cap = deflateBound(&z, (uLong)len);
	out = malloc(cap);
	if (out) {
		z.next_in = (Bytef *)text;
		z.avail_in = (uInt)len;
		z.next_out = out;
		z.avail_out = (uInt)cap;
		if (deflate(&z, Z_FINISH) != Z_STREAM_END || z.total_out >= len) {
			free(out);	/* did not fit or did not pay */
			out = NULL;
		} else {
			*out_len = z.total_out;
		}
	}
	deflateEnd(&z);
	return out;
}
