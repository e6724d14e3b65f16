/*
 * weight_memo.h - the weight check (weight_scale.h) run once for the
 * models it would give one result.
 *
 * A model whose weights are all in its file (none read from a file beside
 * it) and that no test set feeds has a check - the runs, the correction
 * scales, what goes on the record - that is a function of the file's bytes
 * less who made it (store/records.h: pn_onnx_model_key) and of the binding
 * it runs at.  The memo keeps each such result for the rest of the extract
 * run, so a hub's re-uploads of one model under other versions, and the
 * "fine-tunes" of a model published without its weight files (every large
 * weight absent, so nothing in the file changed), cost one check, not one
 * each; the store is the same bytes whichever copy came first (each copy
 * gets what its own check would have given).  A real fine-tune has other
 * bytes, so another key: it is checked on its own.
 *
 * Thread-safe: extract's workers share one memo.
 */
#ifndef PN_WEIGHT_MEMO_H
#define PN_WEIGHT_MEMO_H

#include <stddef.h>

#include "common/arena.h"
#include "common/util.h"
#include "extract/check_form.h"
#include "extract/weight_scale.h"
#include "schemas/ir.h"

typedef struct pn_weight_memo pn_weight_memo;

pn_weight_memo *pn_weight_memo_new(void);
void pn_weight_memo_free(pn_weight_memo *memo);
/* The run's book of blind checks' values (value_keys.h), which answers
 * for a model whose outputs another check's run computed. */
pn_value_book *pn_weight_memo_book(pn_weight_memo *memo);

/* The memo key of a model (decoded as m from the file bytes[0..len), to be
 * checked at bind): 1 and *key when its check is a function of them, 0
 * when not (some weight's bytes came from a file beside it, or a test set
 * feeds the check). */
int pn_weight_memo_key(const pn_model *m, const void *bytes, size_t len, const pn_dimbind *bind,
		       int has_testset, pn_key *key);

/* The check remembered under key: sets m's correction scales and fills out
 * (in a) as pn_weight_scale_check would have; 1 when found, 0 when not,
 * -1 when out of memory. */
int pn_weight_memo_get(pn_weight_memo *memo, const pn_key *key, pn_model *m, pn_arena *a,
		       pn_weight_check *out);

/* Remembers m's check (after pn_weight_scale_check): its scales and out.
 * 0, or -1 when out of memory (the memo is unchanged). */
int pn_weight_memo_put(pn_weight_memo *memo, const pn_key *key, const pn_model *m,
		       const pn_weight_check *wc);

/* The blind check remembered under f's key (check_form.h), mapped onto m's
 * values: as pn_weight_memo_get. */
int pn_weight_memo_get_form(pn_weight_memo *memo, const pn_check_form *f, pn_model *m,
			    pn_arena *a, pn_weight_check *out);
/* Remembers m's blind check (run with f's draw names) under f's key, when
 * it passed: a result that names a value of the file is not shared.  As
 * pn_weight_memo_put. */
int pn_weight_memo_put_form(pn_weight_memo *memo, const pn_check_form *f, const pn_model *m,
			    const pn_weight_check *wc);

#endif
