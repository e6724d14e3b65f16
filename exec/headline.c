/*
 * headline.c - the compiler-regression share (see headline.h).
 */
#include "exec/headline.h"

#include <string.h>

#include "common/err.h"
#include "common/util.h"
#include "exec/profile.h"
#include "store/subgraphs.h"
#include "store/tables.h"

static void share_add(pn_share *s, int regression)
{
	s->timed++;
	s->regressions += regression;
}

static int is_regression(const Passnet__Profile *p)
{
	for (size_t i = 0; i < p->n_flags; i++)
		if (pn_flag_index(p->flags[i]) == PN_FLAG_COMPILER_REGRESSION)
			return 1;
	return 0;
}

int pn_headline_add(pn_rtxn *t, const uint8_t key[16], const Passnet__Profile *p, pn_headline *h)
{
	if (!p || !p->ort)
		return 0;
	h->baselines++;
	/* refused and skipped baselines hold no time: they are not in N */
	if (!p->ort->status || strcmp(p->ort->status, "ok"))
		return 0;
	int reg = is_regression(p);
	share_add(&h->all, reg);
	share_add(&h->size[pn_baseline_size_bucket(p->nodes)], reg);
	pn_occ_summary occ;
	if (pn_occurrences(t, key, NULL, &occ))
		return -1;
	for (int i = 0; i < PN_N_STRATEGIES; i++)
		if (occ.per_strategy[i] > 0)
			share_add(&h->strategy[i], reg);
	return 0;
}

typedef struct walk {
	pn_rtxn *t;
	pn_headline *h;
} walk;

static int on_profile(void *ud, pn_bytes key, pn_bytes val, const Passnet__Profile *p)
{
	(void)val;
	walk *w = ud;
	return key.len == 16 ? pn_headline_add(w->t, key.data, p, w->h) : 0;
}

int pn_headline_read(pn_rtxn *t, pn_headline *h, char *err)
{
	memset(h, 0, sizeof *h);
	walk w = {.t = t, .h = h};
	if (pn_profiles_foreach(t, NULL, 0, on_profile, &w))
		return pn_fail(err, "reading the profiles failed");
	return 0;
}

int pn_headline_measured(const pn_headline *h)
{
	return h->all.timed > 0;
}

double pn_share_pct(pn_share s)
{
	return s.timed ? 100.0 * (double)s.regressions / (double)s.timed : 0.0;
}

void pn_headline_sentence(const pn_headline *h, char *buf, size_t cap)
{
	if (pn_headline_measured(h))
		snprintf(buf, cap, "%.1f%% of %lld timed subgraphs are slower with ONNX Runtime's "
			 "default optimisations than without (published: %d%% under %s)",
			 pn_share_pct(h->all), (long long)h->all.timed, PN_PUBLISHED_SHARE_PCT,
			 PN_PUBLISHED_COMPILER);
	else if (h->baselines)
		snprintf(buf, cap, "ONNX Runtime baseline not measured: ORT timed none of the %lld "
			 "subgraphs given to it (refused or skipped), so there is no "
			 "compiler-regression share", (long long)h->baselines);
	else
		snprintf(buf, cap, "ONNX Runtime baseline not measured: no subgraph has been timed "
			 "by ORT, so there is no compiler-regression share (make ort installs ORT; "
			 "then passnet baseline)");
}

/* "NAME X% of N" for every group ORT timed, separated by "; ". */
static void print_groups(FILE *f, const char *const *names, const pn_share *s, int n)
{
	int first = 1;
	for (int i = 0; i < n; i++) {
		if (!s[i].timed)
			continue;
		fprintf(f, "%s%s %.1f%% of %lld", first ? "" : "; ", names[i], pn_share_pct(s[i]),
			(long long)s[i].timed);
		first = 0;
	}
}

void pn_headline_print(FILE *f, const pn_headline *h, const char *prefix)
{
	char line[512];
	pn_headline_sentence(h, line, sizeof line);
	fprintf(f, "%s%s\n", prefix, line);
	if (!pn_headline_measured(h))
		return;
	fprintf(f, "%sby size: ", prefix);
	print_groups(f, pn_baseline_size_names, h->size, PN_BASELINE_SIZES);
	fprintf(f, "\n%sby strategy: ", prefix);
	print_groups(f, pn_strategy_names, h->strategy, PN_N_STRATEGIES);
	fputc('\n', f);
}

static void json_groups(FILE *f, const char *key, const char *const *names, const pn_share *s,
			int n)
{
	fprintf(f, ",\"%s\":{", key);
	for (int i = 0; i < n; i++) {
		fputs(i ? "," : "", f);
		pn_json_str(f, names[i]);
		fprintf(f, ":{\"timed\":%lld,\"regressions\":%lld}", (long long)s[i].timed,
			(long long)s[i].regressions);
	}
	fputc('}', f);
}

void pn_headline_json(FILE *f, const pn_headline *h)
{
	char line[512];
	pn_headline_sentence(h, line, sizeof line);
	fprintf(f, "\"headline\":{\"measured\":%s,\"baselines\":%lld,\"timed\":%lld,"
		"\"regressions\":%lld,", pn_headline_measured(h) ? "true" : "false",
		(long long)h->baselines, (long long)h->all.timed, (long long)h->all.regressions);
	if (pn_headline_measured(h))
		fprintf(f, "\"share\":%.4f,", (double)h->all.regressions / (double)h->all.timed);
	else
		fputs("\"share\":null,", f);
	fprintf(f, "\"published_share\":%.2f,\"published_compiler\":\"%s\",\"line\":",
		PN_PUBLISHED_SHARE_PCT / 100.0, PN_PUBLISHED_COMPILER);
	pn_json_str(f, line);
	json_groups(f, "by_size", pn_baseline_size_names, h->size, PN_BASELINE_SIZES);
	json_groups(f, "by_strategy", pn_strategy_names, h->strategy, PN_N_STRATEGIES);
	fputc('}', f);
}
