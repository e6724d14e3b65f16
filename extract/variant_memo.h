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

#endif
