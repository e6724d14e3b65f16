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
#include "store/query.h"

static const char usage[] =
	"usage: passnet stats [--unknown]\n"
	"\n"
	"Summarises the store: models by source and opset, the op histogram,\n"
	"values whose shape is not fully known, and errors by kind.\n"
	"  --unknown  also list every value with unknown dims, model by model,\n"
	"             with the op that produces it\n";

typedef struct stats {
	pn_tally sources, opsets, ops, errors, unknown_ops;
	int64_t models, places, failed, nodes, values, unknown, weights;
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

/* Values the stored inference left open, with the op producing each. */
static void list_unknown(stats *s, const pn_key *key, const void *data, size_t len)
{
	pn_model *m = NULL;
	Passnet__Model *rec = NULL;
	char err[PN_ERRLEN];
	if (pn_model_from_record(data, len, &m, &rec, err))
		return;
	const pn_graph *g = m->graph;
	char hex[33];
	pn_key_hex(key, hex);
	for (int v = 0; v < g->n_values; v++) {
		const pn_value *val = &g->values[v];
		if (val->role != PN_ROLE_NODE || val->type.kind != PN_KIND_TENSOR ||
		    pn_type_is_static(&val->type))
			continue;
		const pn_node *p = &g->nodes[val->producer];
		pn_tally_add(&s->unknown_ops, p->op_type, 1);
		if (s->list_unknown) {
			char buf[160];
			printf("unknown  %.12s %s  %s = %s(...)  %s\n", hex, rec->path, val->name,
			       p->op_type, pn_type_desc(&val->type, buf, sizeof buf));
		}
	}
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
	pn_tally *all[] = {&s.sources, &s.opsets, &s.ops, &s.errors, &s.unknown_ops};
	for (size_t i = 0; i < 5; i++)
		pn_tally_sort(all[i]);
	if (cli->json)
		print_json(&s);
	else
		print_text(&s);
	for (size_t i = 0; i < 5; i++)
		pn_tally_free(all[i]);
	return 0;
}
