/* SPDX-License-Identifier: MIT */
/* common/tc-err.c - the caller-supplied error message buffer. */
#include <stdarg.h>
#include <stdio.h>
#include "common/tc.h"

int
tc_err_set(struct tc_err *err, int code, const char *fmt, ...)
{
	va_list ap;

	if (!err || err->code)
		return code;
	err->code = code;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	return code;
}

void
tc_err_clear(struct tc_err *err)
{
	if (!err)
		return;
	err->code = 0;
	err->msg[0] = '\0';
}
