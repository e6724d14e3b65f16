/*
 * check_ort.c - `passnet check --backend ort`: the timed runs of reference
 * and candidate on ONNX Runtime (exec/ort.h) instead of passnet's executor.
 *
 * Only the timing changes backend: the outputs a candidate is judged on
 * still come from passnet's executor, compared with the reference's there,
 * so a rewrite is scored by what it gains under a real compiler without
 * ORT's numerics deciding whether it is correct.  ORT runs at its default
 * graph optimisation level (ALL), inter-op 1 and sequential, with the
 * check's --threads as intra-op threads (1 when not given: the baseline's
 * protocol, exec/baseline.h), both models the same way.
 *
 * The library is opened once by the command, before any child is forked;
 * each timing child makes its own sessions from the model files' bytes.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "exec/ort.h"
#include "judge/check_impl.h"
#include "model/onnx.h"

struct pn_check_ort {
	pn_ort_session *s;
	const char **in_names, **out_names;
	int n_in, n_out;
};

/* path: a .onnx file or a folder holding model.onnx (as pn_model_load_path). */
static int read_model(const char *path, void **data, size_t *len, char *err)
{
	char file[4096];
	struct stat st;
	if (!stat(path, &st) && S_ISDIR(st.st_mode))
		snprintf(file, sizeof file, "%s/model.onnx", path);
	else
		snprintf(file, sizeof file, "%s", path);
	int rc = pn_read_file(file, data, len, err);
	return rc > 0 ? pn_fail(err, "%s: no such file", file) : rc;
}

/* Names are borrowed from g, which the caller keeps loaded. */
static int bind_names(pn_check_ort *x, const pn_graph *g, char *err)
{
	x->n_in = g->n_inputs;
	x->n_out = g->n_outputs;
	x->in_names = calloc((size_t)x->n_in + 1, sizeof(char *));
	x->out_names = calloc((size_t)x->n_out + 1, sizeof(char *));
	if (!x->in_names || !x->out_names)
		return pn_fail(err, "out of memory");
	for (int i = 0; i < x->n_in; i++)
		x->in_names[i] = g->values[g->inputs[i]].name;
	for (int i = 0; i < x->n_out; i++)
		x->out_names[i] = g->values[g->outputs[i]].name;
	return 0;
}

int pn_check_ort_load(const char *path, const pn_graph *g, const pn_check_opts *o,
		      pn_check_ort **out, char *err)
{
	*out = NULL;
	pn_check_ort *x = calloc(1, sizeof *x);
	if (!x)
		return pn_fail(err, "out of memory");
	void *data = NULL;
	size_t len = 0;
	int rc = read_model(path, &data, &len, err);
	if (!rc) {
		rc = pn_ort_session_new(o->ort, data, len, PN_ORT_ENABLE_ALL,
					o->threads > 0 ? o->threads : 1, NULL, &x->s, err);
		if (rc)
			pn_errprefix(err, "ONNX Runtime %s", pn_ort_version(o->ort));
	}
	free(data);
	if (!rc)
		rc = bind_names(x, g, err);
	if (rc) {
		pn_check_ort_free(x);
		return -1;
	}
	*out = x;
	return 0;
}

int pn_check_ort_run(pn_check_ort *x, pn_tensor *const *in, int n_in, char *err)
{
	if (n_in != x->n_in)
		return pn_fail(err, "%d inputs for a model of %d", n_in, x->n_in);
	if (pn_ort_run(x->s, in, x->in_names, n_in, x->out_names, x->n_out, err)) {
		pn_errprefix(err, "ONNX Runtime");
		return -1;
	}
	return 0;
}

void pn_check_ort_free(pn_check_ort *x)
{
	if (!x)
		return;
	pn_ort_session_free(x->s);
	free(x->in_names);
	free(x->out_names);
	free(x);
}
