/* feed.c - the inputs a model runs on (see feed.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/err.h"
#include "common/util.h"
#include "runtime/session.h"
#include "runtime/feed.h"
#include "runtime/inputs.h"
#include "runtime/infer.h"
#include "model/onnx.h"

/* input_N.pb from a folder, N = 0..n-1. */
static int read_inputs(const pn_graph *g, const char *dir, pn_tensor **in, char *err)
{
	for (int i = 0; i < g->n_inputs; i++) {
		char path[4096];
		void *data;
		size_t len;
		snprintf(path, sizeof path, "%s/input_%d.pb", dir, i);
		int rc = pn_read_file(path, &data, &len, err);
		if (rc > 0)
			return pn_fail(err, "%s: missing", path);
		if (rc < 0)
			return -1;
		rc = pn_tensor_read_pb(data, len, g->values[g->inputs[i]].type.kind, &in[i], NULL, err);
		free(data);
		if (rc) {
			pn_errprefix(err, "%s", path);
			return -1;
		}
	}
	return 0;
}

/* A configuring integer scalar (a sample rate 'sr', a number of steps) is
 * bound by its own name, like a dim (extract/binding.h): a random value is
 * not an input such a model takes. */
static void bound_scalar(const pn_graph *g, int i, const pn_dimbind *bind, pn_tensor *t)
{
	if (!bind || t->numel != 1 || pn_dtype_is_float(t->dtype) || t->dtype == PN_BOOL ||
	    t->dtype == PN_STRING)
		return;
	for (int k = 0; k < bind->n; k++)
		if (!strcmp(bind->names[k], g->values[g->inputs[i]].name)) {
			pn_tensor_set_f64(t, 0, (double)bind->values[k]);
			return;
		}
}

/* Random inputs need static types: inference binds the symbolic dims.
 * They follow what each input means (runtime/inputs.c: lengths, token ids,
 * masks, rates), and a scalar the binding names takes its bound value. */
static int random_inputs(const pn_graph *g, const pn_dimbind *bind, uint64_t seed, pn_tensor **in,
			 char *err)
{
	pn_infer_result r;
	if (pn_infer_graph(g, bind, NULL, &r, err))
		return -1;
	pn_type *types = malloc(sizeof(pn_type) * (size_t)(g->n_inputs + 1));
	int rc = types ? 0 : pn_fail(err, "out of memory");
	for (int i = 0; !rc && i < g->n_inputs; i++)
		types[i] = r.v[g->inputs[i]].type;
	if (!rc)
		rc = pn_model_inputs(g, types, seed, in, err);
	for (int i = 0; !rc && i < g->n_inputs; i++)
		bound_scalar(g, i, bind, in[i]);
	free(types);
	pn_infer_result_free(&r);
	return rc;
}

int pn_feed_has_testset(const pn_model *m)
{
	return m->n_testsets && m->testsets[0].n_inputs == m->graph->n_inputs &&
	       m->graph->n_inputs > 0;
}

int pn_feed_prepare(const pn_model *m, const char *dir, const pn_dimbind *bind, uint64_t seed,
		    pn_feed *f, char *err)
{
	const pn_graph *g = m->graph;
	memset(f, 0, sizeof *f);
	if (!dir && pn_feed_has_testset(m)) {
		f->from_testset = 1;
		f->v = m->testsets[0].inputs;
		f->n = m->testsets[0].n_inputs;
		return 0;
	}
	f->owned = calloc((size_t)g->n_inputs + 1, sizeof(pn_tensor *));
	if (!f->owned)
		return pn_fail(err, "out of memory");
	f->v = f->owned;
	f->n = g->n_inputs;
	int rc = dir ? read_inputs(g, dir, f->owned, err) : random_inputs(g, bind, seed, f->owned, err);
	/* A failed feed holds nothing, so a caller that gives up on it need not
	 * free it (the binding search did not, and leaked it: LeakSanitizer). */
	if (rc)
		pn_feed_free(f);
	return rc;
}

void pn_feed_free(pn_feed *f)
{
	for (int i = 0; f->owned && i < f->n; i++)
		pn_tensor_free(f->owned[i]);
	free(f->owned);
	memset(f, 0, sizeof *f);
}

int pn_write_pb_files(const char *dir, const char *stem, const pn_graph *g, const int *values,
		      pn_tensor *const *t, int n, char *err)
{
	if (mkdir(dir, 0777) && errno != EEXIST)
		return pn_fail(err, "%s: %s", dir, strerror(errno));
	for (int i = 0; i < n; i++) {
		char path[4096];
		void *bytes;
		size_t len;
		snprintf(path, sizeof path, "%s/%s_%d.pb", dir, stem, i);
		if (pn_tensor_write_pb(t[i], g->values[values[i]].name, &bytes, &len, err))
			return -1;
		int rc = pn_write_file(path, bytes, len, err);
		free(bytes);
		if (rc)
			return -1;
	}
	return 0;
}
