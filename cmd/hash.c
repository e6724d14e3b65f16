/*
 * hash.c - `passnet hash FILE...`: the canonical hash of a model's whole
 * graph, and with --subgraphs the set of subgraph hashes every strategy
 * finds in it.  The store is not touched: this is how to ask "is this the
 * same computation?" of two files, and what the dedup property tests use.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "common/err.h"
#include "canon/form.h"
#include "runtime/infer.h"
#include "model/formats.h"
#include "model/onnx.h"
#include "partition/partition.h"

typedef struct hash_opts {
	int subgraphs, json, list;
	pn_dimbind bind;
} hash_opts;

/* The model as extract stores it: large weights as metadata. */
static int load_for_hashing(const char *path, pn_model **out, char *err)
{
	void *data = NULL;
	size_t len = 0;
	int rc = pn_read_file(path, &data, &len, err);
	if (rc)
		return rc > 0 ? pn_fail(err, "no such file") : -1;
	char dir[4096];
	snprintf(dir, sizeof dir, "%s", path);
	char *slash = strrchr(dir, '/');
	if (slash)
		*slash = 0;
	else
		snprintf(dir, sizeof dir, ".");
	pn_fileio io = pn_dirio(dir);
	pn_model *m = pn_model_new();
	if (!m) {
		free(data);
		return pn_fail(err, "out of memory");
	}
	Onnx__ModelProto *mp = pn_model_unpack(data, len, m, err);
	pn_decode_opts o = {.weights_as_meta = 1};
	rc = !mp || pn_onnx_resolve_external(mp, &io, m, err) < 0 || pn_model_from_proto(mp, &o, m, err);
	free(data);
	if (rc) {
		pn_model_free(m);
		return -1;
	}
	*out = m;
	return 0;
}

static int cmp_key(const void *a, const void *b)
{
	return memcmp(a, b, 16);
}

static int print_subgraphs(pn_pview *pv, const pn_graph *g, const pn_infer_result *r, int list,
			   char *err)
{
	pn_key *keys = NULL;
	int nk = 0, cap = 0, rc = 0;
	for (int s = 0; s < PN_N_STRATEGIES && !rc; s++) {
		pn_cuts cuts = {0};
		if (pn_strategies[s].run(pv, &cuts)) {
			rc = pn_fail(err, "%s: out of memory", pn_strategies[s].name);
			break;
		}
		for (int i = 0; i < cuts.n && !rc; i++) {
			pn_form f;
			if (pn_form_of_cut(g, r, cuts.nodes[i], cuts.len[i], &f, err)) {
				rc = -1;
				break;
			}
			if (list) {
				char hex[33];
				pn_key_hex(&f.hash, hex);
				printf("%s %s", hex, pn_strategies[s].name);
				for (int k = 0; k < f.n_nodes; k++)
					printf(" %s", f.ops[k]);
				for (int k = 0; k < cuts.len[i]; k++)
					printf(" #%s", g->nodes[cuts.nodes[i][k]].name);
				printf("\n");
			}
			if (nk == cap) {
				cap = cap ? cap * 2 : 256;
				keys = realloc(keys, sizeof(pn_key) * (size_t)cap);
			}
			keys[nk++] = f.hash;
			pn_form_free(&f);
		}
		pn_cuts_free(&cuts);
	}
	qsort(keys, (size_t)nk, sizeof(pn_key), cmp_key);
	for (int i = 0; i < nk && !rc && !list; i++) {
		if (i && !memcmp(&keys[i], &keys[i - 1], 16))
			continue;
		char hex[33];
		pn_key_hex(&keys[i], hex);
		printf("%s\n", hex);
	}
	free(keys);
	return rc;
}

static int hash_one(const char *path, const hash_opts *o)
{
	char err[PN_ERRLEN] = "";
	pn_model *m = NULL;
	pn_infer_result r;
	pn_pview pv;
	memset(&pv, 0, sizeof(pv));
	if (load_for_hashing(path, &m, err))
		return pn_die("hash: %s: %s", path, err);
	int rc = pn_infer_graph(m->graph, &o->bind, NULL, &r, err);
	if (!rc)
		rc = pn_pview_build(&pv, m->graph, &r, err);
	if (!rc && o->subgraphs) {
		rc = print_subgraphs(&pv, m->graph, &r, o->list, err);
	} else if (!rc) {
		pn_form f;
		rc = pn_form_of_cut(m->graph, &r, pv.order, pv.n, &f, err);
		if (!rc) {
			char h[33], p[33];
			pn_key_hex(&f.hash, h);
			pn_key_hex(&f.pattern, p);
			if (o->json) {
				printf("{\"file\":");
				pn_json_str(stdout, path);
				printf(",\"hash\":\"%s\",\"pattern\":\"%s\",\"nodes\":%d,\"approximate\":%s}\n",
				       h, p, f.n_nodes, f.approximate ? "true" : "false");
			} else {
				printf("%s  %s  %s\n", h, p, path);
			}
			pn_form_free(&f);
		}
	}
	pn_pview_free(&pv);
	if (m)
		pn_infer_result_free(&r);
	pn_model_free(m);
	return rc ? pn_die("hash: %s: %s", path, err) : 0;
}

static hash_opts ho;

static const pn_option options[] = {
	PN_FLAG(0, "subgraphs", &ho.subgraphs,
		"print every distinct subgraph hash the partition strategies find, sorted, one per "
		"line"),
	PN_FLAG(0, "list", &ho.list,
		"print every cut instead: hash, strategy, ops in canonical order and nodes"),
	PN_CALLBACK(0, "dim", "NAME=V", &ho.bind, pn_opt_dim, "1", "value of a symbolic input dim"),
	PN_OPT_TABLE_END,
};

static int run(pn_ctx *ctx)
{
	int rc = 0;
	ho.json = ctx->json;
	if (ho.list)
		ho.subgraphs = 1;
	for (int i = 0; i < ctx->argc; i++)
		if (hash_one(ctx->argv[i], &ho))
			rc = 1;
	pn_dimbind_free(&ho.bind);
	return rc;
}

const pn_cmd_spec pn_cmd_hash = {
	.options = options,
	.args = "FILE...",
	.min_args = 1,
	.max_args = -1,
	.summary = "canonical hash of a model file's graph or of its subgraphs",
	.description = "canonical hash and pattern hash of a model file's graph, or the set of "
		       "subgraph hashes the strategies find in it (no store involved)",
	.details = "Prints the canonical hash and the pattern hash of each model's graph (all\n"
		   "its compute nodes as one cut; weights count by shape, as in the store).\n",
	.run = run,
};
