/* SPDX-License-Identifier: MIT */
/*
 * common/tc-json.c - Jansson helpers shared by the server and deps/.
 */
#include <jansson.h>
#include "common/tc.h"
#include "common/tc-json.h"

json_t *
tc_json_str(const char *s)
{
	json_t *j;
	struct tc_buf b;
	const unsigned char *p;

	if (!s)
		return json_null();
	j = json_string(s);
	if (j)
		return j;
	tc_buf_init(&b);
	for (p = (const unsigned char *)s; *p;) {
		int n = 0;

		if (*p < 0x80)
			n = 1;
		else if ((*p & 0xe0) == 0xc0 && *p >= 0xc2)
			n = 2;
		else if ((*p & 0xf0) == 0xe0)
			n = 3;
		else if ((*p & 0xf8) == 0xf0 && *p <= 0xf4)
			n = 4;
		for (int i = 1; i < n; i++)
			if ((p[i] & 0xc0) != 0x80)
				n = 0;
		if (n) {
			tc_buf_add(&b, p, (size_t)n);
			p += n;
		} else {
			tc_buf_adds(&b, "\xef\xbf\xbd");
			p++;
		}
	}
	j = json_string(b.data);
	tc_buf_free(&b);
	return j ? j : json_string("?");
}
