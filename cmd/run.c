/*
 * run.c - `passnet run MODEL_OR_KEY`: runs a whole model on the executor.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cmd/cmd.h"
#include "runtime/feed.h"
#include "common/err.h"
#include "runtime/exec.h"
#include "runtime/infer.h"
#include "extract/ingest.h"
#include "store/query.h"

static const char usage[] =
	"usage: passnet run MODEL_OR_KEY [--inputs DIR] [--outputs DIR] [--write-inputs DIR]\n"
	"                   [--seed S] [--dim NAME=V]... [--check-shapes]\n"
	"\n"
	"Runs a model on the reference executor.  MODEL_OR_KEY is an .onnx file, a\n"
	"folder holding model.onnx, or the key (prefix) of a stored model, whose\n"
	"weights kept as metadata are regenerated from their statistics.\n"
	"  --inputs DIR   input_N.pb files (default: the model's test_data_set_0,\n"
	"                 else seeded random inputs)\n"
	"  --outputs DIR  write output_N.pb files there (created if missing)\n"
	"  --write-inputs DIR  write the inputs the model ran on as input_N.pb\n"
	"                 there; with --outputs DIR, the same DIR becomes a\n"
	"                 backend-test set other runtimes can be checked on\n"
	"  --seed S       seed for regenerated weights and random inputs (default 1)\n"
	"  --dim NAME=V   value of a symbolic input dim (an unnamed one is INPUT:AXIS;\n"
	"                 default: a stored model's binding, else 1)\n"
	"  --check-shapes infer every value's shape from the inputs' shapes, then\n"
	"                 compare with the shapes the run produces (exit 1 on a\n"
	"                 mismatch; values inference leaves open are counted)\n"
	"Prints one line per output: name, type, and summary statistics.\n";

typedef struct run_opts {
	const char *target, *inputs, *outputs, *write_inputs;
	uint64_t seed;
	pn_dimbind bind;
	int check_shapes;
} run_opts;

/* --check-shapes: inferred types beside what the run produced. */
typedef struct shape_check {
	const pn_graph *g;
	pn_infer_result inferred;
	int checked, unknown, mismatched;
} shape_check;

static void observe_shape(void *ud, int v, const pn_tensor *t)
{
	shape_check *sc = ud;
	const pn_type *ty = &sc->inferred.v[v].type;
	if (t->kind != PN_KIND_TENSOR)
		return;
	sc->checked++;
	if (!pn_type_is_static(ty)) {
		sc->unknown++;
		return;
	}
	int same = ty->rank == t->rank && (!ty->dtype || ty->dtype == t->dtype);
	for (int i = 0; same && i < t->rank; i++)
		same = ty->dims[i] == t->dims[i];
	if (!same) {
		char a[128], b[128];
		sc->mismatched++;
		printf("shape mismatch  %s  inferred %s, produced %s\n", sc->g->values[v].name,
		       pn_type_desc(ty, a, sizeof a), pn_tensor_desc(t, b, sizeof b));
	}
}

static int start_shape_check(shape_check *sc, const pn_graph *g, pn_tensor *const *in, int n,
			     char *err)
{
	pn_type *types = calloc((size_t)g->n_inputs + 1, sizeof(pn_type));
	for (int i = 0; i < g->n_inputs; i++) {
		types[i] = g->values[g->inputs[i]].type;
		if (i < n && in[i] && in[i]->kind == PN_KIND_TENSOR) {
			types[i].dtype = in[i]->dtype;
			types[i].rank = in[i]->rank;
			for (int d = 0; d < in[i]->rank; d++)
				types[i].dims[d] = in[i]->dims[d];
		}
	}
	sc->g = g;
	int rc = pn_infer_graph(g, NULL, types, &sc->inferred, err);
	free(types);
	return rc;
}

static int load_target(const run_opts *o, const pn_cli *cli, pn_model **m, char *err)
{
	struct stat sb;
	if (!stat(o->target, &sb))
		return pn_model_load_path(o->target, 1, m, err);
	pn_store *st;
	pn_rtxn *t;
	if (pn_open_for_reading(cli->db, &st, &t))
		return pn_fail(err, "%s is neither a file nor a model in %s", o->target, cli->db);
	pn_key key;
	pn_bytes val;
	int rc = pn_find_key(t, PN_T_MODELS, o->target, &key, err);
	if (rc == 1)
		rc = pn_fail(err, "%s is neither a file nor a stored model", o->target);
	if (!rc && pn_get(t, PN_T_MODELS, key.b, 16, &val) != 0)
		rc = pn_fail(err, "model record vanished");
	if (!rc)
		rc = pn_model_from_record(val.data, val.len, m, NULL, err);
	pn_rtxn_end(t);
	pn_store_close(st);
	return rc;
}

static void summarise(const char *name, const pn_tensor *t)
{
	char desc[128];
	if (t->kind != PN_KIND_TENSOR || t->dtype == PN_STRING || !t->numel) {
		printf("%s  %s\n", name, t->kind == PN_KIND_TENSOR ? pn_tensor_desc(t, desc, sizeof desc)
								   : "(sequence/optional)");
		return;
	}
	double lo = INFINITY, hi = -INFINITY, sum = 0;
	for (int64_t i = 0; i < t->numel; i++) {
		double x = pn_tensor_get_f64(t, i);
		lo = x < lo ? x : lo;
		hi = x > hi ? x : hi;
		sum += x;
	}
	printf("%s  %s  mean %.6g  min %.6g  max %.6g\n", name, pn_tensor_desc(t, desc, sizeof desc),
	       sum / (double)t->numel, lo, hi);
}

/* --dim values first (the first match wins), then the binding a stored
 * model was ingested with (extract/binding.h), in m's arena. */
static pn_dimbind with_stored(const pn_dimbind *cli, pn_model *m)
{
	int n = cli->n + m->bind.n;
	pn_dimbind b = {0, pn_arena_alloc(&m->arena, sizeof(char *) * (size_t)(n + 1)),
			pn_arena_alloc(&m->arena, sizeof(int64_t) * (size_t)(n + 1))};
	for (int i = 0; b.names && b.values && i < n; i++, b.n++) {
		const pn_dimbind *from = i < cli->n ? cli : &m->bind;
		int k = i < cli->n ? i : i - cli->n;
		b.names[i] = from->names[k];
		b.values[i] = from->values[k];
	}
	return b;
}

static int execute(const run_opts *o, const pn_cli *cli, char *err)
{
	pn_model *m = NULL;
	if (load_target(o, cli, &m, err))
		return -1;
	const pn_graph *g = m->graph;
	pn_tensor **out = calloc((size_t)g->n_outputs + 1, sizeof(void *));
	pn_feed feed;
	pn_dimbind bind = with_stored(&o->bind, m);
	int rc = pn_feed_prepare(m, o->inputs, &bind, o->seed, &feed, err);
	pn_exec_opts eo = {.seed = o->seed, .threads = cli->threads};
	pn_session *s = NULL;
	shape_check sc = {0};
	if (!rc && o->write_inputs)
		rc = pn_write_pb_files(o->write_inputs, "input", g, g->inputs, feed.v, feed.n, err);
	if (!rc && o->check_shapes) {
		rc = start_shape_check(&sc, g, feed.v, feed.n, err);
		eo.observe = observe_shape;
		eo.observe_ud = &sc;
	}
	if (!rc)
		rc = pn_session_new(g, &eo, &s, err);
	if (!rc)
		rc = pn_session_run(s, feed.v, feed.n, out, err);
	if (!rc && o->check_shapes) {
		printf("shapes: %d values checked, %d equal to inference, %d left open by inference, "
		       "%d mismatched\n", sc.checked, sc.checked - sc.unknown - sc.mismatched, sc.unknown,
		       sc.mismatched);
		if (sc.mismatched)
			rc = pn_fail(err, "%d inferred shapes differ from the executed ones", sc.mismatched);
	}
	if (o->check_shapes)
		pn_infer_result_free(&sc.inferred);
	for (int i = 0; !rc && i < g->n_outputs; i++)
		summarise(g->values[g->outputs[i]].name, out[i]);
	if (!rc && o->outputs)
		rc = pn_write_pb_files(o->outputs, "output", g, g->outputs, out, g->n_outputs, err);
	for (int i = 0; i < g->n_outputs; i++)
		pn_tensor_free(out[i]);
	free(out);
	pn_feed_free(&feed);
	pn_session_free(s);
	pn_model_free(m);
	return rc;
}

int cmd_run(int argc, char **argv, const pn_cli *cli)
{
	if (pn_wants_help(argc, argv, usage))
		return 0;
	run_opts o = {.seed = 1};
	const char *v;
	for (int i = 1; i < argc; i++) {
		if ((v = pn_opt_value(argc, argv, &i, "--inputs")))
			o.inputs = v;
		else if ((v = pn_opt_value(argc, argv, &i, "--outputs")))
			o.outputs = v;
		else if ((v = pn_opt_value(argc, argv, &i, "--write-inputs")))
			o.write_inputs = v;
		else if (!strcmp(argv[i], "--check-shapes"))
			o.check_shapes = 1;
		else if ((v = pn_opt_value(argc, argv, &i, "--seed")))
			o.seed = strtoull(v, NULL, 10);
		else if ((v = pn_opt_value(argc, argv, &i, "--dim"))) {
			if (pn_parse_dim(&o.bind, v))
				return pn_die("--dim wants NAME=V, got '%s'", v);
		} else if (argv[i][0] == '-' || o.target) {
			fputs(usage, stderr);
			return 2;
		} else {
			o.target = argv[i];
		}
	}
	if (!o.target) {
		fputs(usage, stderr);
		return 2;
	}
	char err[PN_ERRLEN] = "";
	int rc = execute(&o, cli, err);
	pn_dimbind_free(&o.bind);
	return rc ? pn_die("run: %s", err) : 0;
}
