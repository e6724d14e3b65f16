/*
 * jsonc.h - reading JSON with json-c: the files `passnet check` and `score`
 * read (task.json, results JSON Lines) and npm's answers.  json-c parses;
 * this only fixes how strictly, and reads members the way those callers
 * want them (absent and mistyped alike give NULL or -1).
 */
#ifndef PN_JSONC_H
#define PN_JSONC_H

#include <stddef.h>
#include <stdint.h>

#include <json.h>

/* Parses text[0..len): exactly one JSON value, blanks around it allowed,
 * in json-c's strict mode (no trailing commas or comments) with UTF-8
 * checked, nested at most 64 deep.  NULL with "offset N: problem" on error; release
 * the value with json_object_put. */
json_object *pn_json_parse(const char *text, size_t len, char *err);

/* Member key of an object (NULL when obj is no object or lacks it). */
json_object *pn_json_get(json_object *obj, const char *key);
/* The member's string, or NULL when absent or not a string. */
const char *pn_json_str_of(json_object *obj, const char *key);
/* The member as an unsigned 64-bit integer: 0, or -1 when absent or not a
 * non-negative integer (a seed is 64 bits, more than a double holds). */
int pn_json_u64(json_object *obj, const char *key, uint64_t *out);
/* True for an integer or a floating-point number. */
int pn_json_is_num(json_object *v);
/* Item i of an array (NULL when v is no array or i is out of range). */
json_object *pn_json_item(json_object *v, size_t i);
/* Items of an array, 0 for anything else. */
size_t pn_json_len(json_object *v);

#endif
