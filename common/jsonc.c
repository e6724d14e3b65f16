/*
 * jsonc.c - see jsonc.h.
 */
#include "common/jsonc.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"

json_object *pn_json_parse(const char *text, size_t len, char *err)
{
	if (len > (size_t)1 << 30) {
		pn_fail(err, "JSON text of %zu bytes is too long", len);
		return NULL;
	}
	const char *nul = memchr(text, '\0', len);
	if (nul) {
		pn_fail(err, "offset %zu: NUL byte in JSON text", (size_t)(nul - text));
		return NULL;
	}
	/* json-c only knows a top-level number has ended when it sees what
	 * follows, so the text goes in with its terminating NUL. */
	char *buf = malloc(len + 1);
	struct json_tokener *tok = json_tokener_new_ex(64);
	if (!buf || !tok) {
		free(buf);
		if (tok)
			json_tokener_free(tok);
		pn_fail(err, "out of memory");
		return NULL;
	}
	memcpy(buf, text, len);
	buf[len] = '\0';
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	json_object *v = json_tokener_parse_ex(tok, buf, (int)len + 1);
	enum json_tokener_error e = json_tokener_get_error(tok);
	size_t end = json_tokener_get_parse_end(tok);
	if (!v || e != json_tokener_success) {
		pn_fail(err, "offset %zu: %s", end > len ? len : end,
			e == json_tokener_continue ? "unexpected end of JSON text" : json_tokener_error_desc(e));
		json_object_put(v);
		v = NULL;
	} else {
		/* Whatever follows the value must be blank (or the NUL). */
		for (size_t i = end; i < len && v; i++)
			if (!isspace((unsigned char)buf[i])) {
				pn_fail(err, "offset %zu: text after the JSON value", i);
				json_object_put(v);
				v = NULL;
			}
	}
	json_tokener_free(tok);
	free(buf);
	return v;
}

json_object *pn_json_get(json_object *obj, const char *key)
{
	json_object *m = NULL;
	if (!obj || !json_object_is_type(obj, json_type_object) || !json_object_object_get_ex(obj, key, &m))
		return NULL;
	return m;
}

const char *pn_json_str_of(json_object *obj, const char *key)
{
	json_object *m = pn_json_get(obj, key);
	return m && json_object_is_type(m, json_type_string) ? json_object_get_string(m) : NULL;
}

int pn_json_u64(json_object *obj, const char *key, uint64_t *out)
{
	json_object *m = pn_json_get(obj, key);
	if (!m || !json_object_is_type(m, json_type_int) || json_object_get_int64(m) < 0)
		return -1;
	*out = json_object_get_uint64(m);
	return 0;
}

int pn_json_is_num(json_object *v)
{
	return v && (json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double));
}

json_object *pn_json_item(json_object *v, size_t i)
{
	if (!v || !json_object_is_type(v, json_type_array) || i >= json_object_array_length(v))
		return NULL;
	return json_object_array_get_idx(v, i);
}

size_t pn_json_len(json_object *v)
{
	return v && json_object_is_type(v, json_type_array) ? json_object_array_length(v) : 0;
}
