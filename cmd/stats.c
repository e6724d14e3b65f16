/*
 * stats.c - `passnet stats`: what the store holds.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "common/err.h"
#include "common/tally.h"
#include "exec/infer.h"
#include "extract/ingest.h"
#include "schemas/ops.h"
#include "store/query.h"

static const char usage[] =
	"usage: passnet stats [--unknown]\n"
	"\n"
	"Summarises the store: models by source and opset, the op histogram,\n"
	"values whose shape is not fully known, and errors by kind.\n"
	"  --unknown  also list every value with unknown dims, model by model,\n"
	"             with the op that produces it\n";

typedef struct stats {
	pn_tally sources, opsets, ops, errors, unknown_ops, roots, gaps;
	int64_t models, places, failed, nodes, values, unknown, weights, n_gaps;
	int list_unknown;
} stats;

static void count_graph_ops(stats *s, const Onnx__GraphProto *g)
{
	for (size_t i = 0; i < g->n_node; i++) {
		const Onnx__NodeProto *n = g->node[i];
		char name[256];
		snprintf(name, sizeof name, "%s%s%s", n->domain && *n->domain ? n->domain : "",
			 n->domain && *n->domain ? "::" : "", n->op_type);
		pn_tally_add(&s->ops, name, 1);
		for (size_t a = 0; a < n->n_attribute; a++) {
			if (n->attribute[a]->g)
				count_graph_ops(s, n->attribute[a]->g);
			for (size_t k = 0; k < n->attribute[a]->n_graphs; k++)
				count_graph_ops(s, n->attribute[a]->graphs[k]);
		}
	}
}

/* Why a value's shape is open.  A node whose output shape is unknown
 * although every input's shape is known is where unknown dims start (a
 * root).  That is expected when the op's output size depends on data it
 * reads: a data-dependent op (NonZero, NonMaxSuppression, Loop, ...), or an
 * integer input whose contents inference could not compute (Reshape's
 * shape, TopK's k, Range's limits, ... derived from data).  Any other root
 * is a gap in inference, counted apart so a test can insist there is none. */
static int root_is_data_dependent(const pn_graph *g, const pn_infer_result *r, const pn_node *n)
{
	if (n->op < 0)
		return 0;
	const pn_op_info *op = &pn_ops[n->op];
	if ((op->flags & (F_DATA_DEP | F_RANDOM | F_SEQ)) || op->kind == CONTROL)
		return 1;
	for (int k = 0; k < n->n_in; k++) {
		int v = n->in[k];
		if (v >= 0 && pn_dtype_is_int(r->v[v].type.dtype) && !r->v[v].value && !g->values[v].data)
			return 1;
	}
	return 0;
}

static int is_root(const pn_infer_result *r, const pn_node *n)
{
	for (int k = 0; k < n->n_in; k++) {
		int v = n->in[k];
		if (v >= 0 && r->v[v].type.kind == PN_KIND_TENSOR && !pn_type_is_static(&r->v[v].type))
			return 0;
	}
	return 1;
}

static void list_unknown(stats *s, const pn_key *key, const void *data, size_t len)
{
	pn_model *m = NULL;
	Passnet__Model *rec = NULL;
	char err[PN_ERRLEN];
	pn_infer_result r;
	if (pn_model_from_record(data, len, &m, &rec, err))
		return;
	const pn_graph *g = m->graph;
	if (pn_infer_graph(g, &m->bind, NULL, &r, err)) {
		pn_model_free(m);
		return;
	}
	char hex[33];
	pn_key_hex(key, hex);
	for (int v = 0; v < g->n_values; v++) {
		const pn_value *val = &g->values[v];
		if (val->role != PN_ROLE_NODE || r.v[v].type.kind != PN_KIND_TENSOR ||
		    pn_type_is_static(&r.v[v].type))
			continue;
		const pn_node *p = &g->nodes[val->producer];
		pn_tally_add(&s->unknown_ops, p->op_type, 1);
		const char *why = "downstream of a data-dependent size";
		if (is_root(&r, p)) {
			int legit = root_is_data_dependent(g, &r, p);
			why = legit ? "size depends on data" : "INFERENCE GAP";
			pn_tally_add(legit ? &s->roots : &s->gaps, p->op_type, 1);
			s->n_gaps += !legit;
		}
		if (s->list_unknown) {
			char buf[160];
			printf("unknown  %.12s %s  %s = %s(...)  %s  [%s]\n", hex, rec->path, val->name,
			       p->op_type, pn_type_desc(&r.v[v].type, buf, sizeof buf), why);
		}
	}
	pn_infer_result_free(&r);
	pn_model_free(m);
}

static int on_model(void *ud, pn_bytes key, pn_bytes val)
{
	stats *s = ud;
	Passnet__Model *m = passnet__model__unpack(NULL, val.len, val.data);
	if (!m)
		return 0;
	s->models++;
	s->nodes += m->nodes;
	s->values += m->values;
	s->unknown += m->unknown_dims;
	s->weights += (int64_t)m->n_weights;
	for (size_t i = 0; i < m->n_opsets; i++) {
		char name[160];
		snprintf(name, sizeof name, "%s %lld",
			 m->opsets[i]->domain && *m->opsets[i]->domain ? m->opsets[i]->domain : "ai.onnx",
			 (long long)m->opsets[i]->version);
		pn_tally_add(&s->opsets, name, 1);
	}
	if (m->graph)
		count_graph_ops(s, m->graph->graph);
	if (m->unknown_dims) {
		pn_key k;
		memcpy(k.b, key.data, 16);
		list_unknown(s, &k, val.data, val.len);
	}
	passnet__model__free_unpacked(m, NULL);
	return 0;
}

static int on_place(void *ud, pn_bytes key, pn_bytes val)
{
	(void)key;
	stats *s = ud;
	Passnet__ModelPath *mp = passnet__model_path__unpack(NULL, val.len, val.data);
	if (!mp)
		return 0;
	char name[512];
	int failed = mp->status == PASSNET__MODEL_STATUS__MODEL_FAILED;
	snprintf(name, sizeof name, "%s (%s)", mp->source, failed ? "failed" : "stored");
	pn_tally_add(&s->sources, name, 1);
	s->places++;
	s->failed += failed;
	passnet__model_path__free_unpacked(mp, NULL);
	return 0;
}

static int on_error(void *ud, pn_bytes key, pn_bytes val)
{
	(void)key;
	stats *s = ud;
	Passnet__Error *e = passnet__error__unpack(NULL, val.len, val.data);
	if (!e)
		return 0;
	char kind[PN_ERRLEN], name[PN_ERRLEN + 32];
	pn_message_kind(e->message, kind, sizeof kind);
	snprintf(name, sizeof name, "%s: %s", e->stage, kind);
	pn_tally_add(&s->errors, name, 1);
	passnet__error__free_unpacked(e, NULL);
	return 0;
}

static void print_text(stats *s)
{
	printf("models      %lld unique, found at %lld places (%lld failed)\n", (long long)s->models,
	       (long long)s->places, (long long)s->failed);
	printf("nodes       %lld (with nested graphs)\n", (long long)s->nodes);
	printf("values      %lld, %lld with unknown dims\n", (long long)s->values,
	       (long long)s->unknown);
	printf("weights     %lld kept as metadata\n", (long long)s->weights);
	pn_tally_print(&s->sources, "places by source:", 0, stdout);
	pn_tally_print(&s->opsets, "models by opset:", 0, stdout);
	pn_tally_print(&s->ops, "op histogram:", 0, stdout);
	pn_tally_print(&s->unknown_ops, "unknown dims by producing op:", 0, stdout);
	pn_tally_print(&s->roots, "where unknown dims start (size depends on data):", 0, stdout);
	printf("inference gaps (unknown dims that do not depend on data): %lld\n",
	       (long long)s->n_gaps);
	if (s->n_gaps)
		pn_tally_print(&s->gaps, "gaps by op:", 0, stdout);
	pn_tally_print(&s->errors, "errors by kind:", 0, stdout);
}

static void print_json(stats *s)
{
	printf("{\"models\":%lld,\"places\":%lld,\"failed\":%lld,\"nodes\":%lld,\"values\":%lld,"
	       "\"unknown_dims\":%lld,\"weights_as_metadata\":%lld,",
	       (long long)s->models, (long long)s->places, (long long)s->failed, (long long)s->nodes,
	       (long long)s->values, (long long)s->unknown, (long long)s->weights);
	pn_tally_json(&s->sources, "sources", stdout);
	putchar(',');
	pn_tally_json(&s->opsets, "opsets", stdout);
	putchar(',');
	pn_tally_json(&s->ops, "ops", stdout);
	putchar(',');
	pn_tally_json(&s->unknown_ops, "unknown_by_op", stdout);
	putchar(',');
	pn_tally_json(&s->roots, "unknown_roots", stdout);
	printf(",\"inference_gaps\":%lld,", (long long)s->n_gaps);
	pn_tally_json(&s->gaps, "gaps_by_op", stdout);
	putchar(',');
	pn_tally_json(&s->errors, "errors", stdout);
	printf("}\n");
}

int cmd_stats(int argc, char **argv, const pn_cli *cli)
{
	if (pn_wants_help(argc, argv, usage))
		return 0;
	stats s;
	memset(&s, 0, sizeof(s));
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--unknown")) {
			s.list_unknown = 1;
		} else {
			fputs(usage, stderr);
			return 2;
		}
	}
	pn_store *st;
	pn_rtxn *t;
	if (pn_open_for_reading(cli->db, &st, &t))
		return 1;
	pn_foreach(t, PN_T_MODELS, NULL, 0, on_model, &s);
	pn_foreach(t, PN_T_MODEL_PATHS, NULL, 0, on_place, &s);
	pn_foreach(t, PN_T_ERRORS, NULL, 0, on_error, &s);
	pn_rtxn_end(t);
	pn_store_close(st);
	pn_tally *all[] = {&s.sources, &s.opsets, &s.ops, &s.errors, &s.unknown_ops, &s.roots, &s.gaps};
	for (size_t i = 0; i < 7; i++)
		pn_tally_sort(all[i]);
	if (cli->json)
		print_json(&s);
	else
		print_text(&s);
	for (size_t i = 0; i < 7; i++)
		pn_tally_free(all[i]);
	return 0;
}
