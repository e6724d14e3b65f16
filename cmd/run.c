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
#include "store/records.h"

typedef struct run_opts {
	const char *target, *inputs, *outputs, *write_inputs;
	uint64_t seed;
	pn_dimbind bind;
	int check_shapes;
} run_opts;

static run_opts ro = {.seed = 1};

static const pn_option options[] = {
	PN_STRING(0, "inputs", "DIR", &ro.inputs, "the model's test_data_set_0, else seeded random inputs",
		  "input_N.pb files"),
	PN_STRING(0, "outputs", "DIR", &ro.outputs, NULL,
		  "write output_N.pb files there (created if missing)"),
	PN_STRING(0, "write-inputs", "DIR", &ro.write_inputs, NULL,
		  "write the inputs the model ran on as input_N.pb there; with --outputs DIR, the "
		  "same DIR becomes a backend-test set other runtimes can be checked on"),
	PN_UINT64(0, "seed", "S", &ro.seed, "1", "seed for regenerated weights and random inputs"),
	PN_CALLBACK(0, "dim", "NAME=V", &ro.bind, pn_opt_dim, NULL,
		    "value of a symbolic input dim (an unnamed one is INPUT:AXIS; default: a stored "
		    "model's binding, else 1)"),
	PN_FLAG(0, "check-shapes", &ro.check_shapes,
		"infer every value's shape from the inputs' shapes, then compare with the shapes "
		"the run produces (exit 1 on a mismatch; values inference leaves open are counted)"),
	PN_OPT_TABLE_END,
};

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

static int load_target(const run_opts *o, const pn_ctx *cli, pn_model **m, char *err)
{
	struct stat sb;
	if (!stat(o->target, &sb))
		return pn_model_load_path(o->target, 1, m, err);
	pn_store *st;
	pn_rtxn *t;
	if (pn_open_for_reading(cli->db, &st, &t))
		return pn_fail(err, "%s is neither a file nor a model in %s", o->target, cli->db);
	pn_key key;
	void *whole = NULL;
	size_t len = 0;
	int rc = pn_find_key(t, PN_T_MODELS, o->target, &key, err);
	if (rc == 1)
		rc = pn_fail(err, "%s is neither a file nor a stored model", o->target);
	if (!rc && pn_model_record_copy(t, key.b, &whole, &len) != 0)
		rc = pn_fail(err, "model record vanished");
	if (!rc)
		rc = pn_model_from_record(whole, len, m, NULL, err);
	free(whole);
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

static int execute(const run_opts *o, const pn_ctx *cli, char *err)
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

/* The store is opened (read-only) only when MODEL_OR_KEY is not a file. */
static int run(pn_ctx *ctx)
{
	char err[PN_ERRLEN] = "";
	ro.target = ctx->argv[0];
	int rc = execute(&ro, ctx, err);
	pn_dimbind_free(&ro.bind);
	return rc ? pn_die("run: %s", err) : 0;
}

const pn_cmd_spec pn_cmd_run = {
	.options = options,
	.args = "MODEL_OR_KEY",
	.min_args = 1,
	.max_args = 1,
	.summary = "run a model on the reference executor",
	.description = "run a model file or a stored model on the executor, write outputs (and with "
		       "`--write-inputs` the inputs it ran on) as TensorProto `.pb` files; "
		       "`--check-shapes` compares inferred shapes with the executed ones",
	.details = "Runs a model on the reference executor.  MODEL_OR_KEY is an .onnx file, a\n"
		   "folder holding model.onnx, or the key (prefix) of a stored model, whose\n"
		   "weights kept as metadata are regenerated from their statistics.\n"
		   "Prints one line per output: name, type, and summary statistics.\n",
	.run = run,
};
