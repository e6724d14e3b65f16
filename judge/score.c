/*
 * score.c - ES_t and its aggregate over the tolerance ladder (see score.h).
 */
#include "judge/score.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "common/err.h"
#include "common/jsonc.h"

static const char *const ec_names[PN_EC_COUNT] = {
	"none", "accuracy", "nan_inf", "shape", "dtype", "runtime", "cheat",
};

const char *pn_err_class_name(int cls)
{
	return cls >= 0 && cls < PN_EC_COUNT ? ec_names[cls] : "?";
}

int pn_err_class_from_name(const char *name)
{
	for (int i = 0; name && i < PN_EC_COUNT; i++)
		if (!strcmp(name, ec_names[i]))
			return i;
	return -1;
}

int pn_sample_correct(const pn_sample *s, int t)
{
	int judged_at = t < 1 ? t : 1;
	return s->error_class == PN_EC_NONE && s->pass_level <= judged_at;
}

/* The level from which a failure of this class stops being penalised. */
static int tolerated_from(int cls)
{
	switch (cls) {
	case PN_EC_NONE:       /* passed at no level <= 1: an accuracy failure */
	case PN_EC_ACCURACY:
		return 1;
	case PN_EC_NANINF:
	case PN_EC_SHAPE:
	case PN_EC_DTYPE:
		return 2;
	case PN_EC_RUNTIME:
		return 3;
	default:               /* cheat, or a class this version does not know */
		return PN_TOL_MAX_LEVEL + 1;
	}
}

int pn_err_tolerated(const pn_sample *s, int t)
{
	return t >= tolerated_from(s->error_class);
}

double pn_rectified(const pn_sample *s, int t, double p, double b)
{
	if (!pn_sample_correct(s, t))
		return pn_err_tolerated(s, t) ? 1.0 : b;
	double sp = s->speedup > 0 && isfinite(s->speedup) ? s->speedup : 1.0;
	return sp < 1 ? pow(sp, p + 1) : sp;
}

double pn_es_t(const pn_sample *s, size_t n, int t, double p, double b)
{
	if (!n)
		return NAN;
	double sum = 0;
	for (size_t i = 0; i < n; i++)
		sum += log(pn_rectified(&s[i], t, p, b));
	return exp(sum / (double)n);
}

/* Weights of the levels -10..4: the strict levels -10..-6 and the loosest
 * one barely count; from -2 on each level weighs 0.8 of the one before. */
static const double es_weights[PN_N_LEVELS] = {
	0.001, 0.001, 0.001, 0.001, 0.001,       /* -10..-6 */
	1, 1, 1,                                  /* -5..-3 */
	0.8, 0.64, 0.512, 0.4096, 0.32768, 0.262144,   /* -2..3 */
	0.001,                                    /* 4 */
};

double pn_es_weight(int t)
{
	if (t < PN_TOL_MIN_LEVEL || t > PN_TOL_MAX_LEVEL)
		return 0;
	return es_weights[t - PN_TOL_MIN_LEVEL];
}

double pn_es_aggregate(const double es[PN_N_LEVELS])
{
	double num = 0, den = 0;
	for (int i = 0; i < PN_N_LEVELS; i++) {
		double w = pn_es_weight(PN_TOL_MIN_LEVEL + i);
		num += w * log10(es[i]);
		den += w;
	}
	return pow(10, num / den);
}

/* check_seed (a whole number), check_build and backend (text) as the line
 * has them; ORT's version is part of the backend. */
static void read_origin(json_object *v, pn_sample *s)
{
	uint64_t seed;
	const char *build = pn_json_str_of(v, "check_build");
	const char *backend = pn_json_str_of(v, "backend"), *ort = pn_json_str_of(v, "ort_version");
	s->check_seed[0] = s->check_build[0] = s->backend[0] = 0;
	if (backend)
		snprintf(s->backend, sizeof s->backend, "%s%s%s", backend, ort ? " " : "",
			 ort ? ort : "");
	if (!pn_json_u64(v, "check_seed", &seed))
		snprintf(s->check_seed, sizeof s->check_seed, "%llu", (unsigned long long)seed);
	if (build)
		snprintf(s->check_build, sizeof s->check_build, "%s", build);
}

int pn_sample_parse(const char *line, size_t len, pn_sample *s, char *err)
{
	json_object *v = pn_json_parse(line, len, err);
	if (!v)
		return -1;
	int rc = 0;
	json_object *lvl = pn_json_get(v, "pass_level"), *sp = pn_json_get(v, "speedup");
	s->error_class = pn_err_class_from_name(pn_json_str_of(v, "error_class"));
	s->pass_level = PN_NO_LEVEL;
	s->speedup = NAN;
	double level = pn_json_is_num(lvl) ? json_object_get_double(lvl) : 0;
	if (!json_object_is_type(v, json_type_object))
		rc = pn_fail(err, "not a JSON object");
	else if (s->error_class < 0)
		rc = pn_fail(err, "missing or unknown error_class");
	else if (pn_json_is_num(lvl))   /* cast only in range: -1e37 is UB as an int
					   (fuzzing); out of range fails below */
		s->pass_level = level >= PN_TOL_MIN_LEVEL && level <= PN_TOL_MAX_LEVEL
				? (int)level : PN_NO_LEVEL;
	else if (lvl && !json_object_is_type(lvl, json_type_null))
		rc = pn_fail(err, "pass_level is neither a number nor null");
	if (!rc && pn_json_is_num(sp))
		s->speedup = json_object_get_double(sp);
	if (!rc)
		read_origin(v, s);
	if (!rc && pn_json_is_num(lvl) &&
	    (level != s->pass_level || s->pass_level < PN_TOL_MIN_LEVEL ||
	     s->pass_level > PN_TOL_MAX_LEVEL))
		rc = pn_fail(err, "pass_level %s is not an integer in %d..%d",
			     json_object_to_json_string_ext(lvl, JSON_C_TO_STRING_PLAIN),
			     PN_TOL_MIN_LEVEL, PN_TOL_MAX_LEVEL);
	json_object_put(v);
	return rc;
}
