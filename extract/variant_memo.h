/*
 * variant_memo.h - the run's memo of generalized batch variants, so that
 * the copies of one model (its fine-tunes: the same file less weights that
 * moved below the coarse statistics) share one choice instead of each
 * repeating its runs.
 *
 * What pn_variants_choose makes of a model with nothing to bind (its batch
 * generalized: variants.h) is a function of the model's file key
 * (check_form.h, pn_form_file_key: every value and node in file order, the
 * inferred types, the weights' coarse statistics and by-value bytes) and
 * the number of variants asked for, since the runs it validates with draw
 * each weight from its coarse statistics.  So a model with the key of one
 * remembered takes its variants and notes as they were, whichever came
 * first; the store is the same bytes either way.  A cache: at most 16 MiB
 * of remembered choices, the first ones kept.  Thread-safe.
 */
#ifndef PN_VARIANT_MEMO_H
#define PN_VARIANT_MEMO_H

#include "common/arena.h"
#include "common/util.h"
#include "extract/variants.h"

typedef struct pn_variant_memo pn_variant_memo;

pn_variant_memo *pn_variant_memo_new(void);
void pn_variant_memo_free(pn_variant_memo *memo);

/* 1 and *out (its strings in a) when key is remembered, 0 when not, -1
 * when out of memory. */
int pn_variant_memo_get(pn_variant_memo *memo, const pn_key *key, pn_arena *a, pn_variants *out);

/* Remembers v under key (generalized variants only: no variant has a
 * binding of its own).  0, or -1 when out of memory (the memo is
 * unchanged). */
int pn_variant_memo_put(pn_variant_memo *memo, const pn_key *key, const pn_variants *v);

/* Batch independence verdicts (generalize.h), by the key of the model's
 * canonical form for that check (check_form.h, pn_run_form_make): the
 * check draws its inputs and weights by canonical names from coarse
 * statistics, so renamed and reordered copies of a model (its re-exports)
 * run the same numbers and a form found independent once is independent
 * for each of them.  Only that verdict is kept: a refusal names the
 * file's values, so each copy that is refused finds it out itself.
 * pn_variant_memo_independent: 1 when form is remembered, else 0;
 * pn_variant_memo_learn_independent: 0, or -1 when out of memory. */
int pn_variant_memo_independent(pn_variant_memo *memo, const pn_key *form);
int pn_variant_memo_learn_independent(pn_variant_memo *memo, const pn_key *form);

#endif
