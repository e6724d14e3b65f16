/*
 * check.c - `passnet check`: the task, its variants, the candidate, and the
 * verdict of each variant as one results line (export/export.h).
 *
 * A variant is checked in this order: the candidate is found (a model for
 * every variant, a model per variant, or precomputed outputs); the reference
 * runs on two fresh input sets; the candidate loads in a child, where its
 * signature and its constants are checked before it runs on the same
 * inputs; then its outputs are tested for following its inputs and compared
 * with the reference's over the tolerance ladder.  The first failure decides
 * the error class.
 */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <xxhash.h>

#include "common/err.h"
#include "common/jsonc.h"
#include "common/util.h"
#include "runtime/session.h"
#include "exec/ort.h"
#include "runtime/compare.h"
#include "runtime/feed.h"
#include "judge/check_impl.h"
#include "export/export.h"
#include "judge/score.h"
#include "model/onnx.h"
#include "check_build.h"

#define PATHLEN 4096
/* Fresh input sets: 0 is compared and timed, the others only show whether
 * outputs follow inputs.  When the reference's outputs keep their bits on
 * the first N_SETS (a bool or a tiny integer may repeat by chance), the
 * check draws MORE_SETS before it concludes they do not follow. */
#define N_SETS 2
#define MORE_SETS 8

typedef struct task {
	char dir[PATHLEN];       /* the task folder */
	char id[256];
	int n_var;
	char **var;              /* variant folder names */
	const char *only;        /* the one variant to check, or NULL for all */
	json_object *json;       /* task.json, or NULL */
	/* every exported output of every variant, for the constant scan */
	int n_exp;
	pn_tensor **exp;
	char **exp_label;
	int *exp_var, *exp_out;
} task;

typedef struct verdict {
	const char *variant;
	char dtype[32];
	int cls, level;
	double max_abs, max_rel, time_ref_us, time_cand_us;   /* NAN: none */
	char reason[PN_ERRLEN + 512];
} verdict;

const char pn_check_build[] = PN_CHECK_BUILD;

uint64_t pn_check_seed(uint64_t check_seed, const char *variant, int set)
{
	char text[1024];
	int n = snprintf(text, sizeof text, "passnet-check/%llu/%s/%d",
			 (unsigned long long)check_seed, variant, set);
	return XXH64(text, (size_t)(n < (int)sizeof text ? n : (int)sizeof text - 1), 0);
}

int pn_check_random_seed(uint64_t *seed, char *err)
{
	uint64_t x = 0;
	ssize_t got = getrandom(&x, sizeof x, 0);
	if (got != (ssize_t)sizeof x) {
		FILE *f = fopen("/dev/urandom", "rb");
		size_t n = f ? fread(&x, 1, sizeof x, f) : 0;
		if (f)
			fclose(f);
		if (n != sizeof x)
			return pn_fail(err, "no random source for the check seed (getrandom and "
				       "/dev/urandom fail); give one with --check-seed");
	}
	*seed = x & PN_CHECK_SEED_MAX;
	return 0;
}

static int is_file(const char *path)
{
	struct stat st;
	return !stat(path, &st) && S_ISREG(st.st_mode);
}

static int is_dir(const char *path)
{
	struct stat st;
	return !stat(path, &st) && S_ISDIR(st.st_mode);
}

static void strip_slashes(char *p)
{
	size_t l = strlen(p);
	while (l > 1 && p[l - 1] == '/')
		p[--l] = 0;
}

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

/* --- the task ------------------------------------------------------------------- */

static int add_variant(task *t, const char *name)
{
	for (int i = 0; i < t->n_var; i++)
		if (!strcmp(t->var[i], name))
			return 0;
	char **v = realloc(t->var, sizeof(char *) * (size_t)(t->n_var + 1));
	if (!v)
		return -1;
	t->var = v;
	t->var[t->n_var] = strdup(name);
	return t->var[t->n_var++] ? 0 : -1;
}

/* Variant folders when task.json does not list them: every sub-folder
 * holding a model.onnx, by name. */
static int list_variants(task *t, char *err)
{
	DIR *d = opendir(t->dir);
	if (!d)
		return pn_fail(err, "%s: %s", t->dir, strerror(errno));
	struct dirent *e;
	char path[PATHLEN];
	int rc = 0;
	while (!rc && (e = readdir(d)))
		if (e->d_name[0] != '.' &&
		    snprintf(path, sizeof path, "%s/%s/model.onnx", t->dir, e->d_name) < PATHLEN &&
		    is_file(path))
			rc = add_variant(t, e->d_name);
	closedir(d);
	if (t->n_var > 1)
		qsort(t->var, (size_t)t->n_var, sizeof(char *), pn_cmp_str);
	return rc ? pn_fail(err, "out of memory") : 0;
}

static int read_task_json(task *t, char *err)
{
	char path[PATHLEN];
	void *data;
	size_t len;
	snprintf(path, sizeof path, "%s/task.json", t->dir);
	int rc = pn_read_file(path, &data, &len, err);
	if (rc > 0)
		return 0;   /* a folder of variants without task.json: no ranges, no names */
	if (rc < 0)
		return -1;
	json_object *j = pn_json_parse(data, len, err);
	free(data);
	if (!j) {
		pn_errprefix(err, "%s", path);
		return -1;
	}
	t->json = j;
	if (pn_json_str_of(j, "task"))
		snprintf(t->id, sizeof t->id, "%s", pn_json_str_of(j, "task"));
	json_object *vars = pn_json_get(j, "variants");
	for (size_t i = 0; !rc && i < pn_json_len(vars); i++) {
		const char *name = pn_json_str_of(pn_json_item(vars, i), "name");
		if (name && !strchr(name, '/') && strcmp(name, "..") && strcmp(name, "."))
			rc = add_variant(t, name);
	}
	return rc ? pn_fail(err, "out of memory") : 0;
}

/* Exported outputs of one variant (tensors; others cannot be constants). */
static int load_exported(task *t, int vi)
{
	for (int k = 0;; k++) {
		char path[PATHLEN], err[PN_ERRLEN], label[PATHLEN];
		void *data;
		size_t len;
		snprintf(path, sizeof path, "%s/%s/test_data_set_0/output_%d.pb", t->dir, t->var[vi], k);
		if (pn_read_file(path, &data, &len, err))
			return 0;
		pn_tensor *x = NULL;
		int rc = pn_tensor_read_pb(data, len, PN_KIND_TENSOR, &x, NULL, err);
		free(data);
		if (rc)
			continue;
		int n = t->n_exp + 1;
		pn_tensor **e = realloc(t->exp, sizeof(void *) * (size_t)n);
		t->exp = e ? e : t->exp;
		char **l = realloc(t->exp_label, sizeof(char *) * (size_t)n);
		t->exp_label = l ? l : t->exp_label;
		int *ev = realloc(t->exp_var, sizeof(int) * (size_t)n);
		t->exp_var = ev ? ev : t->exp_var;
		int *eo = realloc(t->exp_out, sizeof(int) * (size_t)n);
		t->exp_out = eo ? eo : t->exp_out;
		if (!e || !l || !ev || !eo) {
			pn_tensor_free(x);
			return -1;
		}
		snprintf(label, sizeof label, "%s/test_data_set_0/output_%d.pb", t->var[vi], k);
		t->exp[t->n_exp] = x;
		t->exp_label[t->n_exp] = strdup(label);
		t->exp_var[t->n_exp] = vi;
		t->exp_out[t->n_exp] = k;
		t->n_exp = n;
	}
}

static void task_free(task *t)
{
	pn_strv_free(t->var, t->n_var);
	for (int i = 0; i < t->n_exp; i++) {
		pn_tensor_free(t->exp[i]);
		free(t->exp_label[i]);
	}
	free(t->exp);
	free(t->exp_label);
	free(t->exp_var);
	free(t->exp_out);
	json_object_put(t->json);
}

/* TASKDIR is a task folder (task.json) or one of its variant folders. */
static int open_task(const char *taskdir, task *t, char *err)
{
	char path[PATHLEN];
	snprintf(t->dir, sizeof t->dir, "%s", taskdir);
	strip_slashes(t->dir);
	snprintf(path, sizeof path, "%s/model.onnx", t->dir);
	if (is_file(path)) {
		/* a variant folder: its task is the folder above */
		char *slash = strrchr(t->dir, '/');
		t->only = strdup(slash ? slash + 1 : t->dir);
		if (slash && slash != t->dir)
			*slash = 0;
		else
			snprintf(t->dir, sizeof t->dir, "%s", slash ? "/" : ".");
	} else if (!is_dir(t->dir)) {
		return pn_fail(err, "%s: not a task folder", taskdir);
	}
	snprintf(t->id, sizeof t->id, "%s", base_name(t->dir));
	if (read_task_json(t, err) || (!t->n_var && list_variants(t, err)))
		return -1;
	if (t->only && add_variant(t, t->only))
		return pn_fail(err, "out of memory");
	if (!t->n_var)
		return pn_fail(err, "%s: no variants (task.json lists none, no folder holds model.onnx)",
			       t->dir);
	for (int i = 0; i < t->n_var; i++)
		if (load_exported(t, i))
			return pn_fail(err, "out of memory");
	return 0;
}

/* --- the candidate ------------------------------------------------------------ */

enum { CAND_NONE, CAND_MODEL, CAND_OUTPUTS };

/* Where the candidate for variant `var` is: an .onnx file used for every
 * variant, <cand>/<var>/model.onnx, <cand>/<var>/output_N.pb, or the same
 * two directly in <cand>. */
static int find_candidate(const char *cand, const char *var, char *path, size_t cap)
{
	if (is_file(cand)) {
		snprintf(path, cap, "%s", cand);
		return CAND_MODEL;
	}
	static const char *const where[][2] = {
		{"%s/%s/model.onnx", "m"}, {"%s/%s/output_0.pb", "o"},
		{"%s/model.onnx", "m"}, {"%s/output_0.pb", "o"},
	};
	for (size_t i = 0; i < sizeof where / sizeof *where; i++) {
		if (i < 2)
			snprintf(path, cap, where[i][0], cand, var);
		else
			snprintf(path, cap, where[i][0], cand);
		if (!is_file(path))
			continue;
		if (where[i][1][0] == 'm')
			return CAND_MODEL;
		*strrchr(path, '/') = 0;
		return CAND_OUTPUTS;
	}
	snprintf(path, cap, "%s/%s", cand, var);
	return CAND_NONE;
}

/* --- verdicts ------------------------------------------------------------------ */

static void fail(verdict *v, int cls, const char *fmt, const char *a, const char *b)
{
	v->cls = cls;
	v->level = PN_NO_LEVEL;
	snprintf(v->reason, sizeof v->reason, fmt, a, b ? b : "");
}

/* Compares outputs got[] with want[]; fills class, level and errors. */
static void judge_outputs(const pn_graph *ref, pn_tensor *const *got, pn_tensor *const *want,
			  verdict *v)
{
	pn_outcmp all = {.level = PN_TOL_MIN_LEVEL};
	for (int k = 0; k < ref->n_outputs; k++) {
		pn_outcmp one;
		char part[320];
		pn_check_compare(got[k], want[k], &one);
		snprintf(part, sizeof part, "output %d ('%s')", k, ref->values[ref->outputs[k]].name);
		pn_check_merge(&all, &one, part);
	}
	if (all.cls == PN_EC_NONE && all.level == PN_NO_LEVEL)
		all.cls = PN_EC_ACCURACY;
	v->cls = all.cls;
	v->level = all.cls == PN_EC_NONE ? all.level : PN_NO_LEVEL;
	int comparable = all.cls == PN_EC_NONE || all.cls == PN_EC_ACCURACY || all.cls == PN_EC_NANINF;
	v->max_abs = comparable ? all.max_abs : NAN;
	v->max_rel = comparable ? all.max_rel : NAN;
	if (all.cls == PN_EC_ACCURACY)
		snprintf(v->reason, sizeof v->reason, "outside tolerance at every level up to %d: %s",
			 PN_TOL_MAX_LEVEL, all.what);
	else if (all.cls != PN_EC_NONE)
		snprintf(v->reason, sizeof v->reason, "%s", all.what);
}

static int read_output(const char *path, int kind, pn_tensor **out, char *err)
{
	void *data;
	size_t len;
	if (pn_read_file(path, &data, &len, err))
		return -1;
	int rc = pn_tensor_read_pb(data, len, kind, out, NULL, err);
	free(data);
	return rc;
}

/* Precomputed outputs: only the exported inputs have known reference
 * outputs, so that is what they are compared on, and nothing is timed. */
static int check_outputs(const pn_model *ref, const char *dir, verdict *v, char *err)
{
	const pn_graph *g = ref->graph;
	if (!ref->n_testsets || ref->testsets[0].n_outputs < g->n_outputs)
		return pn_fail(err, "the variant has no complete test_data_set_0 to compare outputs on");
	pn_tensor **got = calloc((size_t)g->n_outputs + 1, sizeof(void *));
	char path[PATHLEN];
	int n = 0;
	while (snprintf(path, sizeof path, "%s/output_%d.pb", dir, n), is_file(path))
		n++;
	if (n != g->n_outputs) {
		char a[16], b[16];
		snprintf(a, sizeof a, "%d", n);
		snprintf(b, sizeof b, "%d", g->n_outputs);
		fail(v, PN_EC_SHAPE, "the candidate gives %s outputs, the reference %s", a, b);
	}
	for (int k = 0; v->cls == PN_EC_NONE && k < g->n_outputs; k++) {
		snprintf(path, sizeof path, "%s/output_%d.pb", dir, k);
		char msg[PN_ERRLEN] = "";
		if (read_output(path, g->values[g->outputs[k]].type.kind, &got[k], msg))
			fail(v, PN_EC_RUNTIME, "the candidate's %s cannot be read: %s", path, msg);
	}
	if (v->cls == PN_EC_NONE)
		judge_outputs(g, got, ref->testsets[0].outputs, v);
	const char *note = "candidate outputs, not a model: compared on the exported "
			   "test_data_set_0 (fresh inputs need a model to run) and not timed";
	size_t l = strlen(v->reason);
	snprintf(v->reason + l, sizeof v->reason - l, "%s%s", l ? "; " : "", note);
	for (int k = 0; k < g->n_outputs; k++)
		pn_tensor_free(got[k]);
	free(got);
	return 0;
}

/* What task.json gives of input i of variant var: "range": [lo, hi] and
 * "values": [...] (a small integer input). */
static int json_range(const task *t, const char *var, int i, pn_range *r)
{
	json_object *vars = pn_json_get(t->json, "variants");
	for (size_t k = 0; k < pn_json_len(vars); k++) {
		const char *name = pn_json_str_of(pn_json_item(vars, k), "name");
		if (!name || strcmp(name, var))
			continue;
		json_object *in = pn_json_item(pn_json_get(pn_json_item(vars, k), "inputs"), (size_t)i);
		json_object *rg = pn_json_get(in, "range");
		json_object *vals = pn_json_get(in, "values");
		json_object *lo = pn_json_item(rg, 0), *hi = pn_json_item(rg, 1);
		*r = (pn_range){.rank = -1};
		if (pn_json_len(rg) == 2 && pn_json_is_num(lo) && pn_json_is_num(hi) &&
		    json_object_get_double(lo) <= json_object_get_double(hi)) {
			r->lo = json_object_get_double(lo);
			r->hi = json_object_get_double(hi);
			r->known = 1;
		}
		size_t nv = pn_json_len(vals);
		for (size_t e = 0; nv <= PN_SEEN_INTS && e < nv; e++) {
			json_object *x = pn_json_item(vals, e);
			/* a double beyond int64 would be UB to cast (seen while
			 * writing the json fuzz harness): not an integer list then */
			int is_int = json_object_is_type(x, json_type_int);
			double d = is_int ? 0 : json_object_get_double(x);
			if (!pn_json_is_num(x) || (!is_int && !(d > -9.2e18 && d < 9.2e18))) {
				r->n_ints = 0;
				break;
			}
			r->ints[r->n_ints++] = is_int ? json_object_get_int64(x) : (int64_t)d;
		}
		return r->known || r->n_ints;
	}
	return 0;
}

/* Two sets of fresh inputs drawn the way the profiler draws a subgraph's
 * boundary values (floats in the range task.json records), typed from the
 * reference graph (or, where its type is not static, from the exported
 * inputs). */
static int fresh_inputs(const task *t, const char *var, const pn_model *ref, uint64_t check_seed,
			int n_sets, pn_tensor **in, char *err)
{
	const pn_graph *g = ref->graph;
	for (int k = 0; k < n_sets; k++) {
		uint64_t seed = pn_check_seed(check_seed, var, k);
		for (int i = 0; i < g->n_inputs; i++) {
			pn_type ty = g->values[g->inputs[i]].type;
			const pn_tensor *x = ref->n_testsets && i < ref->testsets[0].n_inputs
					     ? ref->testsets[0].inputs[i] : NULL;
			if (!pn_type_is_static(&ty) && x && x->kind == PN_KIND_TENSOR) {
				ty.dtype = x->dtype;
				ty.rank = x->rank;
				memcpy(ty.dims, x->dims, sizeof ty.dims);
			}
			pn_range r;
			int ranged = json_range(t, var, i, &r);
			in[k * g->n_inputs + i] = pn_input_for(g, i, &ty, seed, ranged ? &r : NULL, err);
			if (!in[k * g->n_inputs + i])
				return -1;
		}
	}
	return 0;
}

/* What the candidate's child checks before running it. */
typedef struct precheck {
	pn_tensor *const *ref_in, *const *ref_out;
	int n_in, n_out;
	pn_tensor **exp;          /* exported outputs worth looking for, or NULL */
	const char *const *labels;
	int n_exp;
	double memory_limit;      /* bytes */
} precheck;

static int precheck_candidate(void *ud, const pn_graph *g, pn_runres *r)
{
	const precheck *p = ud;
	int cls = pn_check_signature(g, p->ref_in, p->n_in, p->ref_out, p->n_out, r->reason,
				     sizeof r->reason);
	if (cls != PN_EC_NONE)
		return cls;
	if (pn_check_constants(g, p->exp, p->labels, p->n_exp, r->reason, sizeof r->reason))
		return PN_EC_CHEAT;
	return pn_check_memory(g, p->ref_in, p->n_in, p->memory_limit, r->reason, sizeof r->reason);
}

/* Whether output k changes bits on some input set against set 0. */
static int output_follows(const pn_runres *r, int k)
{
	for (int set = 1; set < r->n_sets; set++)
		if (!pn_tensor_same_bits(r->out[k], r->out[set * r->n_out + k]))
			return 1;
	return 0;
}

/* Exported outputs a candidate must not hold: informative ones, except
 * this variant's outputs that do not follow the inputs (the reference gave
 * the same bits on both fresh sets), which any correct model may contain. */
static void exported_targets(const task *t, int vi, const pn_runres *ref, precheck *p)
{
	p->exp = calloc((size_t)t->n_exp + 1, sizeof(void *));
	p->labels = (const char *const *)t->exp_label;
	p->n_exp = p->exp ? t->n_exp : 0;
	for (int i = 0; i < p->n_exp; i++) {
		int k = t->exp_out[i];
		int fixed = t->exp_var[i] == vi && k < ref->n_out && !output_follows(ref, k);
		p->exp[i] = !fixed && pn_check_informative(t->exp[i]) ? t->exp[i] : NULL;
	}
}

static int outputs_follow_inputs(const pn_runres *r)
{
	for (int k = 0; k < r->n_out; k++)
		if (output_follows(r, k))
			return 1;
	return 0;
}

/* Whether output k of r is input i on every input set (in: [set * n_in + i]). */
static int output_is_input(const pn_runres *r, int k, pn_tensor *const *in, int n_in, int i)
{
	for (int set = 0; set < r->n_sets; set++)
		if (!pn_tensor_same_bits(r->out[set * r->n_out + k], in[set * n_in + i]))
			return 0;
	return 1;
}

/* An output that is one of the inputs, bit for bit, where the reference's
 * is not: the loose tolerance levels would take an input of the output's
 * magnitude as correct.  Returns 1 with the reason in v. */
static int echoes_input(const pn_graph *g, const pn_runres *ref, const pn_runres *cand,
			pn_tensor *const *in, int n_in, verdict *v)
{
	for (int k = 0; k < cand->n_out; k++)
		for (int i = 0; i < n_in; i++)
			if (output_is_input(cand, k, in, n_in, i) && !output_is_input(ref, k, in, n_in, i)) {
				char what[64];
				snprintf(what, sizeof what, "output %d", k);
				fail(v, PN_EC_CHEAT, "the candidate's %s is its input '%s' (the reference's "
				     "is not)", what, g->values[g->inputs[i]].name);
				return 1;
			}
	return 0;
}

static void judge_run(const pn_graph *g, const pn_runres *ref, const pn_runres *cand,
		      pn_tensor *const *in, int n_in, verdict *v)
{
	if (cand->cls != PN_EC_NONE) {
		fail(v, cand->cls, "%s%s", cand->reason, NULL);
		return;
	}
	if (outputs_follow_inputs(ref) && !outputs_follow_inputs(cand)) {
		fail(v, PN_EC_CHEAT, "%s%s", "the candidate's outputs stay the same bits on "
		     "different input sets (the reference's do not)", NULL);
		return;
	}
	if (echoes_input(g, ref, cand, in, n_in, v))
		return;
	judge_outputs(g, cand->out, ref->out, v);
}

/* Speedup of a candidate that ran (correct or not: how far off it is and
 * how fast are separate questions); a failure while timing is a failure,
 * except a reference the timing backend refuses: then the variant is not
 * checked (-1, err). */
static int time_candidate(const pn_runspec *ref, const char *cand, const pn_check_opts *o,
			  verdict *v, char *err)
{
	pn_runres tr;
	pn_time_forked(ref, cand, o, &tr);
	int rc = 0;
	if (tr.cls != PN_EC_NONE && !strncmp(tr.reason, PN_CHECK_REF_UNTIMED,
					      strlen(PN_CHECK_REF_UNTIMED))) {
		rc = pn_fail(err, "%s", tr.reason);
	} else if (tr.cls != PN_EC_NONE) {
		fail(v, PN_EC_RUNTIME, "while timing: %s%s", tr.reason, NULL);
		v->max_abs = v->max_rel = NAN;
	} else {
		v->time_ref_us = tr.ref_us;
		v->time_cand_us = tr.cand_us;
	}
	pn_runres_free(&tr);
	return rc;
}

/* --write-inputs: the inputs a check compared on, to look into a failure
 * (with --check-seed, a past check's). */
static int write_input_set(const char *dir, const char *var, const pn_graph *g,
			   pn_tensor *const *in, char *err)
{
	char path[PATHLEN];
	snprintf(path, sizeof path, "%s/%s", dir, var);
	if (pn_mkdirs(path, 0755, err))
		return -1;
	return pn_write_pb_files(path, "input", g, g->inputs, in, g->n_inputs, err);
}

/* Runs reference and candidate model on fresh inputs and judges. */
static int check_model(const task *t, int vi, const pn_model *ref, const char *cand,
		       const pn_check_opts *o, verdict *v, char *err)
{
	const pn_graph *g = ref->graph;
	int n_in = g->n_inputs, n_sets = N_SETS;
	pn_tensor **in = calloc((size_t)(MORE_SETS * n_in) + 1, sizeof(void *));
	char vdir[PATHLEN];
	snprintf(vdir, sizeof vdir, "%s/%s", t->dir, t->var[vi]);
	pn_runspec rspec = {.model = vdir, .inputs = in, .n_in = n_in, .reference = 1};
	pn_runres rr = {0}, cr = {0};
	int rc = in ? 0 : pn_fail(err, "out of memory");
	for (int more = 0; !rc && more < 2; more++) {
		n_sets = more ? MORE_SETS : N_SETS;
		rspec.n_sets = n_sets;
		for (int i = 0; i < MORE_SETS * n_in; i++) {
			pn_tensor_free(in[i]);
			in[i] = NULL;
		}
		rc = fresh_inputs(t, t->var[vi], ref, o->check_seed, n_sets, in, err);
		pn_runres_free(&rr);
		if (!rc)
			pn_run_forked(&rspec, o, &rr);
		if (!rc && (rr.cls != PN_EC_NONE || rr.n_out != g->n_outputs))
			rc = pn_fail(err, "the reference does not run: %s", rr.reason);
		if (!rc && outputs_follow_inputs(&rr))
			break;
	}
	if (!rc && o->write_inputs)
		rc = write_input_set(o->write_inputs, t->var[vi], g, in, err);
	if (!rc) {
		precheck p = {in, rr.out, n_in, rr.n_out, NULL, NULL, 0, pn_check_memory_limit(o)};
		exported_targets(t, vi, &rr, &p);
		pn_runspec spec = {.model = cand, .inputs = in, .n_sets = n_sets, .n_in = n_in,
				   .precheck = precheck_candidate, .precheck_ud = &p};
		pn_run_forked(&spec, o, &cr);
		free(p.exp);
		judge_run(g, &rr, &cr, in, n_in, v);
	}
	if (!rc && cr.cls == PN_EC_NONE && v->cls != PN_EC_CHEAT)
		rc = time_candidate(&rspec, cand, o, v, err);
	pn_runres_free(&rr);
	pn_runres_free(&cr);
	for (int i = 0; in && i < MORE_SETS * n_in; i++)
		pn_tensor_free(in[i]);
	free(in);
	return rc;
}

static int check_variant(const task *t, int vi, const char *cand, const pn_check_opts *o,
			 verdict *v, char *err)
{
	char vdir[PATHLEN], where[PATHLEN];
	snprintf(vdir, sizeof vdir, "%s/%s", t->dir, t->var[vi]);
	pn_model *ref = NULL;
	if (pn_model_load_path(vdir, 1, &ref, err)) {
		pn_errprefix(err, "reference %s", vdir);
		return -1;
	}
	const pn_graph *g = ref->graph;
	int dt = g->n_outputs ? g->values[g->outputs[0]].type.dtype : 0;
	snprintf(v->dtype, sizeof v->dtype, "%s", pn_dtype_name(dt));
	int rc = 0;
	switch (find_candidate(cand, t->var[vi], where, sizeof where)) {
	case CAND_MODEL:
		rc = check_model(t, vi, ref, where, o, v, err);
		break;
	case CAND_OUTPUTS:
		rc = check_outputs(ref, where, v, err);
		break;
	default:
		fail(v, PN_EC_RUNTIME, "no candidate for this variant (neither %s/model.onnx nor "
		     "%s/output_0.pb)", where, where);
	}
	pn_model_free(ref);
	return rc;
}

/* --- results ------------------------------------------------------------------- */

static void put_num(FILE *f, const char *key, double x, const char *fmt)
{
	fprintf(f, ",\"%s\":", key);
	if (isfinite(x))
		fprintf(f, fmt, x);
	else
		fputs("null", f);
}

static void write_verdict(FILE *f, const task *t, const verdict *v, const pn_check_opts *o)
{
	fputs("{\"task\":", f);
	pn_json_str(f, t->id);
	fputs(",\"variant\":", f);
	pn_json_str(f, v->variant);
	fputs(",\"dtype\":", f);
	pn_json_str(f, v->dtype);
	fputs(",\"error_class\":", f);
	pn_json_str(f, pn_err_class_name(v->cls));
	if (v->cls == PN_EC_NONE && v->level != PN_NO_LEVEL)
		fprintf(f, ",\"pass_level\":%d", v->level);
	else
		fputs(",\"pass_level\":null", f);
	put_num(f, "max_abs", v->max_abs, "%.6g");
	put_num(f, "max_rel", v->max_rel, "%.6g");
	put_num(f, "speedup", v->time_ref_us / v->time_cand_us, "%.6g");
	put_num(f, "time_ref_us", v->time_ref_us, "%.3f");
	put_num(f, "time_cand_us", v->time_cand_us, "%.3f");
	/* which backend the times (and so the speedup) are of */
	fprintf(f, ",\"backend\":\"%s\"", o->ort ? "ort" : "passnet");
	if (o->ort) {
		fputs(",\"ort_version\":", f);
		pn_json_str(f, pn_ort_version(o->ort));
	}
	fputs(",\"reason\":", f);
	pn_json_str(f, v->reason);
	fprintf(f, ",\"check_seed\":%llu,\"check_build\":", (unsigned long long)o->check_seed);
	pn_json_str(f, pn_check_build);
	fputs("}\n", f);
	fflush(f);
}

int pn_check_task(const char *taskdir, const char *candidate, const pn_check_opts *o, FILE *out)
{
	task t = {0};
	char err[PN_ERRLEN] = "";
	if (open_task(taskdir, &t, err)) {
		task_free(&t);
		pn_error_line("%s", err);
		return PN_CHECK_UNCHECKED;
	}
	int status = PN_CHECK_ALL_CORRECT, unchecked = 0;
	for (int i = 0; i < t.n_var; i++) {
		if (t.only && strcmp(t.only, t.var[i]))
			continue;
		verdict v = {.variant = t.var[i], .cls = PN_EC_NONE, .level = PN_NO_LEVEL,
			     .max_abs = NAN, .max_rel = NAN, .time_ref_us = NAN, .time_cand_us = NAN};
		if (check_variant(&t, i, candidate, o, &v, err)) {
			pn_error_line("%s/%s: not checked: %s", t.id, t.var[i], err);
			unchecked = 1;
			continue;
		}
		write_verdict(out, &t, &v, o);
		if (v.cls != PN_EC_NONE || v.level > 1)
			status = PN_CHECK_NOT_CORRECT;
	}
	free((char *)t.only);
	task_free(&t);
	return unchecked ? PN_CHECK_UNCHECKED : status;
}
