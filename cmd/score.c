/*
 * score.c - `passnet score RESULTS.jsonl`: ES_t at every tolerance level and
 * the weighted aggregate, from the lines `passnet check` wrote.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "common/err.h"
#include "common/util.h"
#include "judge/score.h"

static double p = 0, b = 0.1;

static const pn_option options[] = {
	PN_DOUBLE(0, "p", "P", &p, "0", "penalty exponent for slowdowns"),
	PN_DOUBLE(0, "b", "B", &b, "0.1", "score of a failed sample"),
	PN_OPT_TABLE_END,
};

typedef struct samples {
	pn_sample *v;
	size_t n, cap;
} samples;

static int add_sample(samples *s, const pn_sample *x)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 64;
		pn_sample *v = realloc(s->v, cap * sizeof *v);
		if (!v)
			return -1;
		s->v = v;
		s->cap = cap;
	}
	s->v[s->n++] = *x;
	return 0;
}

static int read_samples(const char *path, samples *s)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "r") : stdin;
	if (!f)
		return pn_die("%s: %s", path, strerror(errno));
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	int rc = 0;
	for (long no = 1; !rc && (len = getline(&line, &cap, f)) >= 0; no++) {
		if (strspn(line, " \t\r\n") == (size_t)len)
			continue;
		pn_sample x;
		char err[PN_ERRLEN];
		if (pn_sample_parse(line, (size_t)len, &x, err))
			rc = pn_die("%s:%ld: %s", path, no, err);
		else if (add_sample(s, &x))
			rc = pn_die("out of memory");
	}
	free(line);
	if (f != stdin)
		fclose(f);
	if (!rc && !s->n)
		rc = pn_die("%s: no samples", path);
	return rc;
}

/* --- which checks the samples come from ---------------------------------------- */

/* The distinct check seeds or builds of the samples, sorted ("" for lines
 * without one). */
typedef struct origins {
	const char **v;
	size_t n;
} origins;

static int cmp_cstr(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

enum { ORIGIN_SEED, ORIGIN_BUILD, ORIGIN_BACKEND };

static const char *origin_of(const pn_sample *s, int which)
{
	return which == ORIGIN_SEED ? s->check_seed : which == ORIGIN_BUILD ? s->check_build
									: s->backend;
}

static int distinct(const samples *s, int which, origins *o)
{
	o->v = malloc((s->n + 1) * sizeof(char *));
	o->n = 0;
	if (!o->v)
		return -1;
	for (size_t i = 0; i < s->n; i++)
		o->v[i] = origin_of(&s->v[i], which);
	qsort(o->v, s->n, sizeof(char *), cmp_cstr);
	for (size_t i = 0; i < s->n; i++)
		if (!o->n || strcmp(o->v[o->n - 1], o->v[i]))
			o->v[o->n++] = o->v[i];
	return 0;
}

static void json_origins(const char *key, const origins *o, int as_number)
{
	printf(",\"%s\":[", key);
	for (size_t i = 0; i < o->n; i++) {
		printf("%s", i ? "," : "");
		if (!o->v[i][0])
			printf("null");
		else if (as_number)
			printf("%s", o->v[i]);
		else
			pn_json_str(stdout, o->v[i]);
	}
	putchar(']');
}

static void print_json(const double *es, double agg, size_t n, double p, double b,
		       const origins *seeds, const origins *builds, const origins *backends)
{
	printf("{\"samples\":%zu,\"p\":%.10g,\"b\":%.10g,\"es_t\":{", n, p, b);
	for (int i = 0; i < PN_N_LEVELS; i++)
		printf("%s\"%d\":%.10g", i ? "," : "", PN_TOL_MIN_LEVEL + i, es[i]);
	printf("},\"aggregate\":%.10g", agg);
	json_origins("check_seeds", seeds, 1);
	json_origins("check_builds", builds, 0);
	json_origins("backends", backends, 0);
	printf(",\"mixed\":%s}\n",
	       seeds->n > 1 || builds->n > 1 || backends->n > 1 ? "true" : "false");
}

static void print_origin(const char *what, const origins *o)
{
	if (o->n == 1)
		printf("check %s %s\n", what, o->v[0][0] ? o->v[0] : "(not recorded)");
	else
		printf("MIXED: %zu check %ss\n", o->n, what);
}

static void print_table(const double *es, double agg, size_t n, double p, double b,
			const origins *seeds, const origins *builds, const origins *backends)
{
	printf("%5s  %10s  %8s\n", "t", "ES_t", "weight");
	for (int i = 0; i < PN_N_LEVELS; i++)
		printf("%5d  %10.6g  %8g\n", PN_TOL_MIN_LEVEL + i, es[i],
		       pn_es_weight(PN_TOL_MIN_LEVEL + i));
	printf("aggregate  %.6g  (%zu samples, p %g, b %g)\n", agg, n, p, b);
	print_origin("seed", seeds);
	print_origin("build", builds);
	print_origin("backend", backends);
}

static int check(pn_ctx *ctx)
{
	(void)ctx;
	if (!(b > 0) || !(p >= 0))
		return pn_die("--b must be positive and --p non-negative");
	return 0;
}

static int run(pn_ctx *ctx)
{
	const char *path = ctx->argv[0];
	samples s = {0};
	if (read_samples(path, &s)) {
		free(s.v);
		return 1;
	}
	double es[PN_N_LEVELS];
	for (int i = 0; i < PN_N_LEVELS; i++)
		es[i] = pn_es_t(s.v, s.n, PN_TOL_MIN_LEVEL + i, p, b);
	double agg = pn_es_aggregate(es);
	origins seeds = {0}, builds = {0}, backends = {0};
	if (distinct(&s, ORIGIN_SEED, &seeds) || distinct(&s, ORIGIN_BUILD, &builds) ||
	    distinct(&s, ORIGIN_BACKEND, &backends)) {
		free(seeds.v);
		free(builds.v);
		free(backends.v);
		free(s.v);
		return pn_die("out of memory");
	}
	/* samples of different checks drew different inputs, were judged by
	 * different code, or timed on different backends: their scores are not
	 * one measurement */
	if (seeds.n > 1 || builds.n > 1 || backends.n > 1)
		pn_warn("%s: the samples come from %zu check seeds, %zu check builds and %zu "
			"backends (mixed)", path, seeds.n, builds.n, backends.n);
	if (ctx->json)
		print_json(es, agg, s.n, p, b, &seeds, &builds, &backends);
	else
		print_table(es, agg, s.n, p, b, &seeds, &builds, &backends);
	free(seeds.v);
	free(builds.v);
	free(backends.v);
	free(s.v);
	return 0;
}

const pn_cmd_spec pn_cmd_score = {
	.options = options,
	.args = "RESULTS.jsonl",
	.min_args = 1,
	.max_args = 1,
	.summary = "compute ES_t scores from check results",
	.description = "ES_t for t = -10..4 and the weighted aggregate of `check` results "
		       "(docs/tasks.md; judge/score.h)",
	.details = "Computes ES_t for t = -10..4 and their weighted aggregate over the\n"
		   "samples (one per line; - reads stdin) of `passnet check` results.  At\n"
		   "level t a sample is correct when its error_class is none and pass_level\n"
		   "<= t (from t = 1 on: <= 1); its rectified speedup is s, or s^(p+1) when\n"
		   "s < 1; a sample that is not correct scores b, or 1 from t = 1 when its\n"
		   "error class is tolerated there (accuracy from 1; nan_inf, shape, dtype\n"
		   "from 2; runtime from 3; cheat never).  ES_t is the geometric mean.\n"
		   "The check seeds, builds and timing backends (passnet, or ort and its\n"
		   "version) of the samples are listed; a set that mixes them (samples of\n"
		   "different checks) is marked MIXED, with a warning.  With --json, one JSON\n"
		   "object instead of the table (check_seeds, check_builds, backends, mixed).\n",
	.check = check,
	.run = run,
};
