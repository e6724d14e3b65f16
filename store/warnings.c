#include "store/warnings.h"
#include "store/tables.h"

#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "passnet.pb-c.h"
#include "store/records.h"

const pn_warning_kind pn_warning_kinds[] = {
#define PN_WARNING_KIND(stage, kind, what) {stage, kind, what},
#include "store/warning_kinds.def"
#undef PN_WARNING_KIND
};
const int pn_n_warning_kinds = (int)(sizeof pn_warning_kinds / sizeof *pn_warning_kinds);

const pn_warning_kind *pn_warning_kind_find(const char *kind)
{
	for (int i = 0; kind && i < pn_n_warning_kinds; i++)
		if (!strcmp(pn_warning_kinds[i].kind, kind))
			return &pn_warning_kinds[i];
	return NULL;
}

typedef struct walk {
	pn_rtxn *t;
	const char *kind;
	pn_warning_fn fn;
	void *ud;
	int64_t seen;
	int stopped;
} walk;

static int wanted(const walk *w, const char *kind)
{
	return !w->kind || !strcmp(w->kind, kind);
}

static int emit(walk *w, const char *stage, const char *kind, const char *subject,
		const char *place, const char *message)
{
	pn_warning x = {stage, kind, subject, place ? place : "", message ? message : ""};
	w->seen++;
	if (w->fn && w->fn(w->ud, &x))
		w->stopped = 1;
	return w->stopped;
}

/* "source: path" of a model record (a variant's: of its base, with its
 * number); malloc'd. */
static char *place_of(const Passnet__Model *m)
{
	char *s = NULL;
	const char *src = m && m->source ? m->source : "?", *path = m && m->path ? m->path : "?";
	int n = m && m->has_variant_of ? asprintf(&s, "%s: %s (variant %u)", src, path, m->variant)
				       : asprintf(&s, "%s: %s", src, path);
	return n < 0 ? NULL : s;
}

static int on_model(void *ud, pn_bytes key, pn_bytes val)
{
	walk *w = ud;
	if (key.len != 16)
		return 0;
	char hex[33];
	pn_hex(key.data, 16, hex);
	uint8_t base[16];
	int variant = pn_model_variant_of(val, base);
	/* a variant repeats its base's warnings: listed once, with the base */
	if (!variant && wanted(w, "model")) {
		Passnet__Model *m = pn_models_unpack(val);
		char *place = m && m->n_warnings ? place_of(m) : NULL;
		for (size_t i = 0; m && i < m->n_warnings && !w->stopped; i++)
			emit(w, "extract", "model", hex, place, m->warnings[i]);
		free(place);
		if (m)
			pn_models_free(m);
	}
	if (w->stopped || !(wanted(w, "ranges-not-run") || wanted(w, "ranges-too-big")))
		return w->stopped;
	uint8_t mk[17];
	pn_ranges_marker_key(mk, key.data);
	pn_bytes v;
	if (pn_get(w->t, PN_T_RANGES, mk, 17, &v) != 0)
		return 0;
	Passnet__RangesDone *d = passnet__ranges_done__unpack(NULL, v.len, v.data);
	if (d && d->error && *d->error) {
		const char *kind = strcmp(d->error, PN_RANGES_TOO_BIG) ? "ranges-not-run"
								       : "ranges-too-big";
		if (wanted(w, kind)) {
			void *rec = NULL;
			size_t len = 0;
			Passnet__Model *m = NULL;
			if (!variant)
				m = pn_models_unpack(val);
			else if (!pn_model_record_whole(w->t, val, &rec, &len))
				m = passnet__model__unpack(NULL, len, rec);
			char *place = place_of(m);
			emit(w, "exec", kind, hex, place, d->error);
			free(place);
			free(rec);
			if (m)
				pn_models_free(m);
		}
	}
	if (d)
		passnet__ranges_done__free_unpacked(d, NULL);
	return w->stopped;
}

static int on_profile(void *ud, pn_bytes key, pn_bytes val)
{
	walk *w = ud;
	if (key.len != 16)
		return 0;
	Passnet__Profile *p = pn_profiles_unpack(val);
	if (!p)
		return 0;
	char hex[33];
	pn_hex(key.data, 16, hex);
	if (p->status && !strcmp(p->status, "failed") && wanted(w, "profile-failed"))
		emit(w, "exec", "profile-failed", hex, "", p->reason ? p->reason : "failed");
	const Passnet__OrtBaseline *b = p->ort;
	if (!w->stopped && b && b->status && strcmp(b->status, "ok")) {
		const char *kind = !strcmp(b->status, "refused") ? "ort-refused"
			: !strcmp(b->status, "skipped") ? "ort-skipped" : NULL;
		if (kind && wanted(w, kind))
			emit(w, "baseline", kind, hex, "", b->message ? b->message : b->status);
	}
	pn_profiles_free(p);
	return w->stopped;
}

int64_t pn_foreach_warning(pn_rtxn *t, const char *kind, pn_warning_fn fn, void *ud)
{
	walk w = {t, kind, fn, ud, 0, 0};
	const pn_warning_kind *k = kind ? pn_warning_kind_find(kind) : NULL;
	const char *stage = k ? k->stage : NULL;
	if (!stage || !strcmp(stage, "extract") || !strcmp(kind, "ranges-not-run") ||
	    !strcmp(kind, "ranges-too-big"))
		if (pn_foreach(t, PN_T_MODELS, NULL, 0, on_model, &w) < 0)
			return -1;
	if (!w.stopped && (!stage || !strcmp(kind, "profile-failed") || !strcmp(stage, "baseline")))
		if (pn_foreach(t, PN_T_PROFILES, NULL, 0, on_profile, &w) < 0)
			return -1;
	return w.seen;
}

void pn_warning_print(FILE *f, const pn_warning *w, int json)
{
	if (json) {
		fprintf(f, "{\"stage\":");
		pn_json_str(f, w->stage);
		fprintf(f, ",\"kind\":");
		pn_json_str(f, w->kind);
		fprintf(f, ",\"subject\":");
		pn_json_str(f, w->subject);
		fprintf(f, ",\"place\":");
		pn_json_str(f, w->place);
		fprintf(f, ",\"message\":");
		pn_json_str(f, w->message);
		fprintf(f, "}\n");
		return;
	}
	fprintf(f, "%-8s %-17s %s  %s%s%s\n", w->stage, w->kind, w->subject, w->place,
		*w->place ? ": " : "", w->message);
}

void pn_warning_clause(FILE *f, int64_t n, const char *kind, const char *dir)
{
	const pn_warning_kind *k = pn_warning_kind_find(kind);
	if (n <= 0 || !k)
		return;
	fprintf(f, "; %lld %s: passnet ls --warnings --kind %s%s%s", (long long)n, k->what, kind,
		dir ? " --export " : "", dir ? dir : "");
}
