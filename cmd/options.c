/* options.c - option helpers the subcommands share: --dim bindings and
 * --shard K/N (the parser itself is parse_options.h). */
#include <stdio.h>
#include <string.h>

#include "cmd/cmd.h"
#include "common/err.h"
#include "common/shard.h"
#include "schemas/ir.h"

#include <stdlib.h>

int pn_parse_dim(pn_dimbind *b, const char *arg)
{
	const char *eq = strchr(arg, '=');
	char *end;
	if (!eq || eq == arg)
		return -1;
	long long v = strtoll(eq + 1, &end, 10);
	if (*end || end == eq + 1 || v < 0)
		return -1;
	const char **names = realloc(b->names, sizeof(char *) * (size_t)(b->n + 1));
	if (!names)
		return -1;
	b->names = names;
	int64_t *values = realloc(b->values, sizeof(int64_t) * (size_t)(b->n + 1));
	if (!values)
		return -1;
	b->values = values;
	b->names[b->n] = strndup(arg, (size_t)(eq - arg));
	b->values[b->n++] = v;
	return 0;
}

void pn_dimbind_free(pn_dimbind *b)
{
	for (int i = 0; i < b->n; i++)
		free((char *)b->names[i]);
	free(b->names);
	free(b->values);
	b->n = 0;
	b->names = NULL;
	b->values = NULL;
}

int pn_opt_dim(void *dest, const char *value, char *err)
{
	if (pn_parse_dim(dest, value))
		return pn_fail(err, "wants NAME=V, got '%s'", value);
	return 0;
}

pn_shard pn_cmd_shard;

int pn_opt_shard(void *dest, const char *value, char *err)
{
	return pn_shard_parse(value, dest, err);
}
