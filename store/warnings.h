/*
 * warnings.h - the warnings of the stages, kept where `passnet ls
 * --warnings` finds them, and their kinds.
 *
 * A warning is about one item of many (a model, a subgraph, an exported
 * variant).  A stage does not print it (only under -v, pn_warn_each): it
 * counts it by kind in its one summary line, which names the kind and the
 * command that lists them, e.g. "27 models did not run for their value
 * ranges: passnet ls --warnings --kind ranges-not-run".
 *
 * The stages that write the store keep their warnings in the records they
 * write anyway, so a rerun neither loses nor repeats one, a merge of shard
 * stores holds the same ones as one build, and no table of their own is
 * needed:
 *
 *   extract   model            a stored model's warnings (Model.warnings)
 *   exec      ranges-not-run   a model that did not run for its value ranges
 *                              (the ranges marker's error)
 *             ranges-too-big   a shape variant above the run limit, not run
 *             profile-failed   a subgraph whose profile failed (its reason)
 *   baseline  ort-refused      a subgraph ONNX Runtime could not load or run
 *             ort-skipped      a subgraph the baseline skipped
 *
 * export opens the store read-only: the variants it leaves out are listed
 * in its output folder's left_out.tsv (export/left_out.h), which `passnet ls
 * --warnings --export DIR` reads, with these kinds:
 *
 *   export    float16-overflow, bfloat16-overflow, pinned-inputs,
 *             constant-outputs, variant-failed
 */
#ifndef PN_WARNINGS_H
#define PN_WARNINGS_H

#include <stdint.h>
#include <stdio.h>

#include "store/store.h"

typedef struct pn_warning_kind {
	const char *stage;
	const char *kind;
	const char *what;   /* "models did not run for their value ranges" */
} pn_warning_kind;

extern const pn_warning_kind pn_warning_kinds[];
extern const int pn_n_warning_kinds;
/* The kind named so, or NULL. */
const pn_warning_kind *pn_warning_kind_find(const char *kind);

/* One warning as listed. */
typedef struct pn_warning {
	const char *stage, *kind;
	const char *subject;   /* a model key or subgraph hash (hex), or TASK/VARIANT */
	const char *place;     /* "source: path" of a model, or "" */
	const char *message;
} pn_warning;

/* The error of the ranges marker of a shape variant too big to run. */
#define PN_RANGES_TOO_BIG "a shape variant above the run limit is not run"

/* The store's ranges marker of a model (exec/ranges.c): its key, then 'R'. */
static inline void pn_ranges_marker_key(uint8_t key[17], const uint8_t model[16])
{
	for (int i = 0; i < 16; i++)
		key[i] = model[i];
	key[16] = 'R';
}

/* Calls fn for every warning the store keeps, of `kind` only when kind is
 * not NULL: the models in key order (each one's model warnings, then its
 * ranges one), then the subgraphs in hash order (profile, then baseline).
 * fn returns non-zero to stop.  Returns the number of warnings seen, or -1
 * on a read error. */
typedef int (*pn_warning_fn)(void *ud, const pn_warning *w);
int64_t pn_foreach_warning(pn_rtxn *t, const char *kind, pn_warning_fn fn, void *ud);


/* Prints one warning: "STAGE  KIND  SUBJECT  PLACE: MESSAGE", or with json
 * one object a line {"stage","kind","subject","place","message"}. */
void pn_warning_print(FILE *f, const pn_warning *w, int json);

/* For a summary line: "; N WHAT: passnet ls --warnings --kind KIND" (with
 * " --export DIR" when dir is not NULL), nothing when n is 0. */
void pn_warning_clause(FILE *f, int64_t n, const char *kind, const char *dir);

#endif
