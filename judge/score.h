/*
 * score.h - the ES_t score of a set of checked samples (`passnet score`).
 *
 * A sample is one (task, variant) line of `passnet check` results: its
 * speedup, its error class and pass_level, the least tolerance level at which
 * every output was within tolerance.  At level t (-10..4):
 *
 *   correct(t)  = error_class is "none" and pass_level <= min(t, 1)
 *                 (from t = 1 on, correctness is judged at t = 1);
 *   rectified   = s^(p+1) if correct and s < 1, s if correct and s >= 1;
 *                 otherwise 1 if t >= 1 and the error class is tolerated at
 *                 t, else b.  Tolerated: accuracy from t = 1 (a sample with
 *                 error class "none" that is not correct counts as
 *                 accuracy), nan_inf, shape and dtype from t = 2, runtime
 *                 from t = 3; cheat never;
 *   ES_t        = geometric mean of the rectified speedups;
 *   aggregate   = 10^(sum_t w_t log10 ES_t / sum_t w_t).
 *
 * A correct sample without a measured speedup (candidate outputs checked
 * without a model) counts as s = 1.
 */
#ifndef PN_SCORE_H
#define PN_SCORE_H

#include <stddef.h>

#include "export/export.h"

enum pn_err_class {
	PN_EC_NONE = 0,
	PN_EC_ACCURACY,
	PN_EC_NANINF,
	PN_EC_SHAPE,
	PN_EC_DTYPE,
	PN_EC_RUNTIME,
	PN_EC_CHEAT,
	PN_EC_COUNT
};

/* rtol and atol at level t for a dtype (judge/tolerance.c: float32,
 * float16, bfloat16, float64; other dtypes use the float32 ladder). */
void pn_tolerance(int dtype, int level, double *rtol, double *atol);

/* pass_level of a sample that passes at no level (JSON null). */
#define PN_NO_LEVEL 99
#define PN_N_LEVELS (PN_TOL_MAX_LEVEL - PN_TOL_MIN_LEVEL + 1)

typedef struct pn_sample {
	double speedup;      /* <= 0 or NaN: not measured */
	int error_class;     /* enum pn_err_class */
	int pass_level;      /* PN_NO_LEVEL when null */
	/* which check made it: its check_seed in decimal and check_build, ""
	 * when the line has none (`passnet score` marks a set that mixes them) */
	char check_seed[24];
	char check_build[40];
	/* what timed it: "passnet", "ort <version>" (`check --backend ort`), ""
	 * when the line does not say (speedups of two backends do not mix) */
	char backend[48];
} pn_sample;

const char *pn_err_class_name(int cls);
int  pn_err_class_from_name(const char *name);   /* -1 if unknown */

int    pn_sample_correct(const pn_sample *s, int t);
/* Whether a sample that is not correct scores 1 instead of b at level t. */
int    pn_err_tolerated(const pn_sample *s, int t);
double pn_rectified(const pn_sample *s, int t, double p, double b);
double pn_es_t(const pn_sample *s, size_t n, int t, double p, double b);
double pn_es_weight(int t);
/* es[i] is ES_t for t = PN_TOL_MIN_LEVEL + i. */
double pn_es_aggregate(const double es[PN_N_LEVELS]);

/* Reads one results line (export.h); 0 or -1 with a message. */
int pn_sample_parse(const char *line, size_t len, pn_sample *s, char *err);

#endif
