/*
 * show.c - `passnet show KEY`: one model (later stages add subgraphs).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "common/err.h"
#include "extract/ingest.h"
#include "store/query.h"

static const char usage[] =
	"usage: passnet show KEY\n"
	"\n"
	"Shows a stored model: source, path and every other place it was found,\n"
	"opsets, inputs and outputs with shapes, its op histogram and warnings.\n"
	"KEY is a model key or a unique prefix of at least 4 hex digits.\n";

typedef struct places {
	pn_key key;
	int n;
} places;

static int print_place(void *ud, pn_bytes key, pn_bytes val)
{
	(void)key;
	places *p = ud;
	Passnet__ModelPath *mp = passnet__model_path__unpack(NULL, val.len, val.data);
	if (!mp)
		return 0;
	if (mp->has_model && mp->model.len == 16 && !memcmp(mp->model.data, p->key.b, 16)) {
		printf("  found at   %s: %s\n", mp->source, mp->path);
		p->n++;
	}
	passnet__model_path__free_unpacked(mp, NULL);
	return 0;
}

typedef struct op_count {
	const char *op;
	int n;
} op_count;

static int cmp_count(const void *a, const void *b)
{
	const op_count *x = a, *y = b;
	return x->n != y->n ? y->n - x->n : strcmp(x->op, y->op);
}

static void count_ops(const pn_graph *g, op_count *c, int *nc)
{
	for (int i = 0; i < g->n_nodes; i++) {
		const pn_node *n = &g->nodes[i];
		int k = 0;
		while (k < *nc && strcmp(c[k].op, n->op_type))
			k++;
		if (k == *nc)
			c[(*nc)++] = (op_count){n->op_type, 0};
		c[k].n++;
		for (int a = 0; a < n->n_attr; a++) {
			if (n->attrs[a].g)
				count_ops(n->attrs[a].g, c, nc);
			for (int j = 0; n->attrs[a].type == PN_ATTR_GRAPHS && j < n->attrs[a].n; j++)
				count_ops(n->attrs[a].graphs[j], c, nc);
		}
	}
}

static void print_values(const char *what, const pn_graph *g, const int32_t *ids, int n)
{
	for (int i = 0; i < n; i++) {
		char buf[256];
		const pn_value *v = &g->values[ids[i]];
		printf("  %-10s %s  %s\n", i ? "" : what, v->name, pn_type_desc(&v->type, buf, sizeof buf));
	}
}

static void print_model(const pn_key *key, const Passnet__Model *rec, const pn_model *m)
{
	char hex[33];
	pn_key_hex(key, hex);
	printf("model      %s\n", hex);
	printf("source     %s\npath       %s\n", rec->source, rec->path);
	printf("size       %llu bytes\nir_version %lld\nproducer   %s\n",
	       (unsigned long long)rec->file_bytes, (long long)rec->ir_version,
	       rec->producer ? rec->producer : "");
	for (size_t i = 0; i < rec->n_opsets; i++)
		printf("opset      %s %lld\n",
		       rec->opsets[i]->domain && *rec->opsets[i]->domain ? rec->opsets[i]->domain : "ai.onnx",
		       (long long)rec->opsets[i]->version);
	printf("status     %s\n", rec->status == PASSNET__MODEL_STATUS__MODEL_WARNING ? "warning" : "ok");
	for (size_t i = 0; i < rec->n_warnings; i++)
		printf("warning    %s\n", rec->warnings[i]);
	printf("nodes      %u (with nested graphs)\nvalues     %u, %u with unknown dims\n", rec->nodes,
	       rec->values, rec->unknown_dims);
	printf("weights    %zu kept as metadata\ntest sets  %zu\n", rec->n_weights, rec->n_testsets);
	print_values("inputs", m->graph, m->graph->inputs, m->graph->n_inputs);
	print_values("outputs", m->graph, m->graph->outputs, m->graph->n_outputs);
	op_count *c = calloc((size_t)rec->nodes + 1, sizeof(*c));
	int nc = 0;
	count_ops(m->graph, c, &nc);
	qsort(c, (size_t)nc, sizeof(*c), cmp_count);
	printf("ops       ");
	for (int i = 0; i < nc; i++)
		printf(" %s:%d", c[i].op, c[i].n);
	printf("\n");
	free(c);
}

int cmd_show(int argc, char **argv, const pn_cli *cli)
{
	if (pn_wants_help(argc, argv, usage))
		return 0;
	if (argc != 2) {
		fputs(usage, stderr);
		return 2;
	}
	pn_store *st;
	pn_rtxn *t;
	if (pn_open_for_reading(cli->db, &st, &t))
		return 1;
	char err[PN_ERRLEN];
	pn_key key;
	int rc = pn_find_key(t, PN_T_MODELS, argv[1], &key, err);
	if (rc == 1)
		rc = pn_fail(err, "no model with key %s", argv[1]);
	pn_bytes val;
	pn_model *m = NULL;
	Passnet__Model *rec = NULL;
	if (!rc && pn_get(t, PN_T_MODELS, key.b, 16, &val) != 0)
		rc = pn_fail(err, "model vanished while reading");
	if (!rc)
		rc = pn_model_from_record(val.data, val.len, &m, &rec, err);
	if (!rc) {
		print_model(&key, rec, m);
		places p = {.key = key};
		pn_foreach(t, PN_T_MODEL_PATHS, NULL, 0, print_place, &p);
	}
	pn_model_free(m);
	pn_rtxn_end(t);
	pn_store_close(st);
	return rc ? pn_die("show: %s", err) : 0;
}
