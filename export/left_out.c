#include "export/left_out.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"

const char *pn_left_out_kind(const char *reason)
{
	if (strstr(reason, "overflows bfloat16"))
		return "bfloat16-overflow";
	if (strstr(reason, "overflows float16"))
		return "float16-overflow";
	if (strstr(reason, "every input is pinned"))
		return "pinned-inputs";
	if (strstr(reason, "keep the same bits"))
		return "constant-outputs";
	return "variant-failed";
}

static void field(FILE *f, const char *s)
{
	for (; s && *s; s++)
		fputc(*s == '\t' || *s == '\n' || *s == '\r' ? ' ' : *s, f);
}

void pn_left_out_line(FILE *f, const char *task, const char *variant, const char *reason)
{
	field(f, task);
	fputc('\t', f);
	field(f, variant);
	fputc('\t', f);
	field(f, pn_left_out_kind(reason));
	fputc('\t', f);
	field(f, reason);
	fputc('\n', f);
}

int64_t pn_left_out_foreach(const char *dir, const char *kind, pn_warning_fn fn, void *ud,
			    char *err)
{
	char path[4200];
	snprintf(path, sizeof path, "%s/%s", dir, PN_LEFT_OUT_FILE);
	FILE *f = fopen(path, "r");
	if (!f)
		return pn_fail(err, "%s: %s (not a task set passnet export wrote?)", path,
			       strerror(errno));
	char *line = NULL;
	size_t cap = 0;
	int64_t seen = 0, no = 0;
	int rc = 0;
	while (!rc && getline(&line, &cap, f) > 0) {
		no++;
		line[strcspn(line, "\r\n")] = 0;
		if (no == 1) {
			if (strncmp(line, PN_LEFT_OUT_HEADER, strlen(PN_LEFT_OUT_HEADER) - 1))
				rc = pn_fail(err, "%s: line 1 is not the header", path);
			continue;
		}
		char *fld[4] = {line, NULL, NULL, NULL};
		for (int i = 1; i < 4 && fld[i - 1]; i++) {
			char *tab = strchr(fld[i - 1], '\t');
			if (tab)
				*tab = 0;
			fld[i] = tab ? tab + 1 : NULL;
		}
		if (!fld[3] || strchr(fld[3], '\t')) {
			rc = pn_fail(err, "%s: line %lld: not task, variant, kind and reason", path,
				     (long long)no);
			break;
		}
		if (kind && strcmp(kind, fld[2]))
			continue;
		char subject[1024];
		snprintf(subject, sizeof subject, "%s/%s", fld[0], fld[1]);
		pn_warning w = {"export", fld[2], subject, "", fld[3]};
		seen++;
		if (fn && fn(ud, &w))
			break;
	}
	if (!rc && ferror(f))
		rc = pn_fail(err, "%s: read error", path);
	free(line);
	fclose(f);
	return rc ? -1 : seen;
}

/* Counts one listed variant under its kind's index in the catalogue. */
static int count_kind(void *ud, const pn_warning *w)
{
	int64_t *counts = ud;
	const pn_warning_kind *k = pn_warning_kind_find(w->kind);
	if (k)
		counts[k - pn_warning_kinds]++;
	return 0;
}

int pn_left_out_summary(FILE *f, const char *dir, char *err)
{
	/* one read of left_out.tsv for every kind's count */
	int64_t *counts = calloc((size_t)pn_n_warning_kinds, sizeof *counts);
	if (!counts)
		return pn_fail(err, "out of memory");
	int rc = pn_left_out_foreach(dir, NULL, count_kind, counts, err) < 0 ? -1 : 0;
	for (int k = 0; !rc && k < pn_n_warning_kinds; k++)
		if (!strcmp(pn_warning_kinds[k].stage, "export"))
			pn_warning_clause(f, counts[k], pn_warning_kinds[k].kind, dir);
	free(counts);
	return rc;
}
