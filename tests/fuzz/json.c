/*
 * json.c - the JSON `passnet check` and `score` read: the input as a
 * task.json (the members check reads: task, seed, each variant's name and
 * its inputs' range and values) and, line by line, as results JSON Lines
 * (score's sample parser).
 */
#include "fuzz.h"

#include <string.h>

#include "common/err.h"
#include "common/jsonc.h"
#include "judge/score.h"

static void read_like_task_json(json_object *j)
{
	uint64_t seed;
	(void)pn_json_str_of(j, "task");
	(void)pn_json_u64(j, "seed", &seed);
	json_object *vars = pn_json_get(j, "variants");
	for (size_t i = 0; i < pn_json_len(vars); i++) {
		json_object *v = pn_json_item(vars, i);
		(void)pn_json_str_of(v, "name");
		json_object *ins = pn_json_get(v, "inputs");
		for (size_t k = 0; k < pn_json_len(ins); k++) {
			json_object *in = pn_json_item(ins, k);
			json_object *rg = pn_json_get(in, "range"), *vals = pn_json_get(in, "values");
			for (size_t e = 0; e < pn_json_len(rg); e++)
				if (pn_json_is_num(pn_json_item(rg, e)))
					(void)json_object_get_double(pn_json_item(rg, e));
			for (size_t e = 0; e < pn_json_len(vals); e++)
				(void)json_object_get_int64(pn_json_item(vals, e));
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[PN_ERRLEN];
	json_object *j = pn_json_parse((const char *)data, size, err);
	if (j) {
		read_like_task_json(j);
		json_object_put(j);
	}
	const char *p = (const char *)data, *end = p + size;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = (size_t)((nl ? nl : end) - p);
		pn_sample s;
		(void)pn_sample_parse(p, len, &s, err);
		p += len + 1;
	}
	return 0;
}
