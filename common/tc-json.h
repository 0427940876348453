/* SPDX-License-Identifier: MIT */
/*
 * common/tc-json.h - Jansson helpers shared by the server and deps/.
 */
#ifndef COMMON_TC_JSON_H
#define COMMON_TC_JSON_H

#include <jansson.h>

/**
 * tc_json_str - a JSON string of @s for Jansson, which refuses text that is
 * not UTF-8: each byte that does not start a valid sequence becomes U+FFFD.
 * Return: a new reference; json_null() for NULL.
 */
json_t *tc_json_str(const char *s);

#endif /* COMMON_TC_JSON_H */
