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
#include "common/util.h"
#include "model/onnx.h"
#include "runtime/session.h"
#include "runtime/infer.h"
#include "extract/binding.h"
#include "extract/ingest.h"
#include "passnet.pb-c.h"
#include "schemas/ops.h"
#include "store/query.h"
#include "store/records.h"

typedef struct run_opts {
	const char *target, *inputs, *outputs, *write_inputs, *write_model;
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
	PN_STRING(0, "write-model", "FILE", &ro.write_model, NULL,
		  "a stored model only: write it as it runs, its weights kept as metadata "
		  "regenerated with --seed, so other runtimes run the very weights it ran"),
	PN_UINT64(0, "seed", "S", &ro.seed, "1", "seed for regenerated weights and random inputs"),
	PN_CALLBACK(0, "dim", "NAME=V", &ro.bind, pn_opt_dim, NULL,
		    "value of a symbolic input dim (an unnamed one is INPUT:AXIS; default: a stored "
		    "model's binding, else the one extract would choose)"),
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

/* *stored_how: NULL for a file; for a stored model how its binding was
 * chosen at ingest ("" when it has nothing bound), in (*m)'s arena. */
static int load_target(const run_opts *o, const pn_ctx *cli, pn_model **m, const char **stored_how,
		       Onnx__ModelProto **proto, char *err)
{
	struct stat sb;
	*stored_how = NULL;
	*proto = NULL;
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
	Passnet__Model *rec = NULL;
	if (!rc)
		rc = pn_model_from_record(whole, len, m, &rec, err);
	free(whole);
	if (!rc) {
		*stored_how = rec->binding_how ? rec->binding_how : rec->n_bound_dims ? "given by --dim" : "";
		if (rec->has_variant_of)
			*stored_how = pn_arena_printf(&(*m)->arena, "shape variant %u: %s", rec->variant,
						      rec->variant_how ? rec->variant_how : "");
		*proto = rec->graph;
	}
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

/* The binding a run feeds its seeded inputs with, and how it was chosen
 * (NULL: the model has nothing to bind). */
typedef struct run_binding {
	pn_dimbind bind;
	const char *how;
} run_binding;

/* A stored model: the --dim values first (the first match wins), then the
 * binding it was ingested with (extract/binding.h), in m's arena. */
static run_binding with_stored(const pn_dimbind *cli, pn_model *m, const char *stored_how)
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
	const char *how = !n ? NULL
		: !*stored_how ? "given by --dim"
		: cli->n ? pn_arena_printf(&m->arena, "stored: %s; with --dim", stored_how)
		: pn_arena_printf(&m->arena, "stored: %s", stored_how);
	return (run_binding){b, how};
}

/* The feed's tensors as .pb bytes, for pn_binding_choose to read the dims
 * they show (the first n that encode; the rest show nothing). */
static pn_bind_testset feed_as_testset(const pn_feed *f, pn_arena *a)
{
	pn_bind_testset ts = {0};
	const void **bytes = pn_arena_alloc(a, sizeof(void *) * (size_t)(f->n + 1));
	size_t *len = pn_arena_alloc(a, sizeof(size_t) * (size_t)(f->n + 1));
	char err[PN_ERRLEN];
	while (bytes && len && ts.n < f->n && f->v[ts.n]) {
		void *b = NULL;
		if (pn_tensor_write_pb(f->v[ts.n], NULL, &b, &len[ts.n], err))
			break;
		bytes[ts.n] = pn_arena_memdup(a, b, len[ts.n]);
		free(b);
		if (!bytes[ts.n++])
			break;
	}
	ts.bytes = bytes;
	ts.len = len;
	return ts;
}

/* A model file: the binding extract would store for it, chosen by
 * pn_binding_choose with the --dim values fixed.  Inputs read from files
 * (--inputs, the model's test_data_set_0) are prepared first and show their
 * dims as a test set does at ingest; seeded inputs are prepared with the
 * chosen binding. */
static int bind_file(const run_opts *o, pn_model *m, pn_feed *feed, run_binding *rb, char *err)
{
	int from_files = o->inputs || pn_feed_has_testset(m);
	pn_bind_testset ts = {0};
	if (from_files) {
		if (pn_feed_prepare(m, o->inputs, &o->bind, o->seed, feed, err))
			return -1;
		ts = feed_as_testset(feed, &m->arena);
	}
	pn_binding chosen;
	if (pn_binding_choose(m, &o->bind, &ts, &m->arena, &chosen, err))
		return -1;
	if (chosen.warning)
		pn_warn("%s: %s", o->target, chosen.warning);
	rb->how = chosen.how;
	rb->bind = chosen.how ? chosen.bind : o->bind;
	return from_files ? 0 : pn_feed_prepare(m, NULL, &rb->bind, o->seed, feed, err);
}

/* "binding: NAME=V ... (how)", each name once, as the run used it. */
static void print_binding(const run_binding *rb)
{
	if (!rb->how) {
		printf("binding: none (no symbolic dims)\n");
		return;
	}
	printf("binding:");
	for (int i = 0; i < rb->bind.n; i++) {
		int seen = 0;
		for (int k = 0; k < i && !seen; k++)
			seen = !strcmp(rb->bind.names[k], rb->bind.names[i]);
		if (!seen)
			printf(" %s=%lld", rb->bind.names[i], (long long)rb->bind.values[i]);
	}
	printf(" (%s)\n", rb->how);
}

/* --- --write-model ------------------------------------------------------------------ */

/* Gives tp the bytes the session regenerates for value v of g (same seed). */
static int fill_tensor(Onnx__TensorProto *tp, const pn_graph *g, int v, uint64_t seed, pn_arena *a,
		       char *err)
{
	pn_tensor *t = pn_weight_regen(g, v, seed, err);
	if (!t)
		return -1;
	tp->has_data_location = 0;
	tp->n_external_data = 0;
	tp->has_raw_data = 1;
	tp->raw_data.len = pn_tensor_nbytes(t);
	tp->raw_data.data = pn_arena_memdup(a, t->data, tp->raw_data.len ? tp->raw_data.len : 1);
	pn_tensor_free(t);
	return tp->raw_data.data ? 0 : pn_fail(err, "out of memory");
}

/* Walks the stored proto graph beside its IR (the same node and attribute
 * order, as ingest stripped it) and fills every tensor kept as metadata:
 * initializers, Constant values, and those of nested graphs. */
static int fill_graph(Onnx__GraphProto *gp, const pn_graph *g, uint64_t seed, pn_arena *a, char *err)
{
	for (size_t i = 0; i < gp->n_initializer && i < (size_t)g->n_inits; i++)
		if (g->values[g->inits[i]].meta &&
		    fill_tensor(gp->initializer[i], g, g->inits[i], seed, a, err))
			return -1;
	for (size_t i = 0; i < gp->n_node && i < (size_t)g->n_nodes; i++) {
		const Onnx__NodeProto *np = gp->node[i];
		const pn_node *n = &g->nodes[i];
		for (size_t k = 0; k < np->n_attribute && k < (size_t)n->n_attr; k++) {
			Onnx__AttributeProto *ap = np->attribute[k];
			const pn_attr *at = &n->attrs[k];
			if (n->op == PN_OP_Constant && ap->t && n->out[0] >= 0 && g->values[n->out[0]].meta &&
			    fill_tensor(ap->t, g, n->out[0], seed, a, err))
				return -1;
			if (ap->g && at->g && fill_graph(ap->g, at->g, seed, a, err))
				return -1;
			for (size_t j = 0; j < ap->n_graphs && j < (size_t)at->n; j++)
				if (fill_graph(ap->graphs[j], at->graphs[j], seed, a, err))
					return -1;
		}
	}
	return 0;
}

static int write_model(const char *path, Onnx__ModelProto *mp, pn_model *m, uint64_t seed, char *err)
{
	if (fill_graph(mp->graph, m->graph, seed, &m->arena, err))
		return -1;
	size_t n = protobuf_c_message_get_packed_size(&mp->base);
	uint8_t *buf = malloc(n ? n : 1);
	if (!buf)
		return pn_fail(err, "out of memory");
	protobuf_c_message_pack(&mp->base, buf);
	int rc = pn_write_file(path, buf, n, err);
	free(buf);
	return rc;
}

static int execute(const run_opts *o, const pn_ctx *cli, char *err)
{
	pn_model *m = NULL;
	const char *stored_how;
	Onnx__ModelProto *proto;
	if (load_target(o, cli, &m, &stored_how, &proto, err))
		return -1;
	if (o->write_model && !proto) {
		pn_model_free(m);
		return pn_fail(err, "--write-model: %s is a model file already", o->target);
	}
	const pn_graph *g = m->graph;
	pn_tensor **out = calloc((size_t)g->n_outputs + 1, sizeof(void *));
	pn_feed feed = {0};
	run_binding rb = {{0}, NULL};
	int rc;
	if (stored_how) {
		rb = with_stored(&o->bind, m, stored_how);
		rc = pn_feed_prepare(m, o->inputs, &rb.bind, o->seed, &feed, err);
	} else {
		rc = bind_file(o, m, &feed, &rb, err);
	}
	if (!rc)
		print_binding(&rb);
	pn_exec_opts eo = {.seed = o->seed, .threads = cli->threads};
	pn_session *s = NULL;
	shape_check sc = {0};
	if (!rc && o->write_model)
		rc = write_model(o->write_model, proto, m, o->seed, err);
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
	/* one line naming the model: inference and kernel errors name only
	 * the node (those of loading start with the path already) */
	if (rc && !strstr(err, ro.target))
		pn_errprefix(err, "%s", ro.target);
	return rc ? pn_die("run: %s", err) : 0;
}

const pn_cmd_spec pn_cmd_run = {
	.options = options,
	.args = "MODEL_OR_KEY",
	.min_args = 1,
	.max_args = 1,
	.summary = "run a model on the reference executor",
	.description = "run a model file or a stored model on the executor, its symbolic dims bound "
		       "as extract binds them (first line `binding: NAME=V ... (how)`), write outputs "
		       "(and with `--write-inputs` the inputs it ran on) as TensorProto `.pb` files, "
		       "with `--write-model` a stored model with the weights it regenerated; "
		       "`--check-shapes` compares inferred shapes with the executed ones",
	.details = "Runs a model on the reference executor.  MODEL_OR_KEY is an .onnx file or a\n"
		   "TorchScript archive (.pt: docs/sources.md), a\n"
		   "folder holding model.onnx, or the key (prefix) of a stored model, whose\n"
		   "weights kept as metadata are regenerated from their statistics.\n"
		   "Symbolic input dims take the --dim values, then a stored model's binding;\n"
		   "a file's are chosen as extract chooses them (extract/binding.h: input\n"
		   "roles, the rule table, the dims its input files show, a search when the\n"
		   "rule's values do not run).  The first line says which: \"binding:\n"
		   "NAME=V ... (how)\", \"(rule)\", \"(test set)\", \"(stored: rule)\", ...,\n"
		   "or \"binding: none\" when no input dim is symbolic.\n"
		   "Then one line per output: name, type, and summary statistics.\n",
	.run = run,
};
