/*
 * check_form.h - a blind model's weight check in canonical terms, so that
 * the copies of one structure share one check.
 *
 * A model some of whose weights were never present (a missing external data
 * file) has a blind check (weight_scale.h): one run on drawn inputs with
 * drawn weights, and a rescaling while an output is not finite and normal.
 * Every draw is seeded by a stream name, and a file's names are its own: a
 * re-export (values and nodes renamed, another node order, another opset of
 * the same ops) would draw other numbers and so need its own run.  Here each
 * value of the main graph gets a name that the file's names do not decide
 * instead (canon/form.h gives the canonical positions, the labelling dedup
 * uses, over every node):
 *   "n<p>.<k>"  output k of the node at canonical position p;
 *   "i<type>.<j>" a graph input, by its declared type and its rank j among
 *               the inputs of that type by first explicit use in
 *               canonical order;
 *   "w<key>"    a weight, by what reads it: the least over its readers of
 *               the reader's label, slot and operands (recursively; other
 *               weights by type and coarse statistics), so that a cut of
 *               the model that keeps a weight's readers draws it as the
 *               model does (extract/value_keys.h); weights alike in all
 *               that (query, key and value projections of one input) draw
 *               alike;
 *   "u<p>.<k>"  any other value, by its first explicit use (input slot k
 *               of the node at position p; uses in canonical order).
 * The check runs with those names as its draws' streams (pn_graph.draw_name),
 * so its result is a function of the key below, which covers all it reads:
 * the form (ops, attributes, the constants kept by value, every type at the
 * binding), the binding, each weight's bytes or coarse statistics in
 * canonical order, and what a graph input's draw reads of its name (its
 * meaning: an integer input named as a mask holds 0 and 1;
 * runtime/inputs.h).  Renamed and reordered copies then have one key and one
 * result, whichever comes first (extract/weight_memo.h keeps it).
 *
 * Coarse statistics: a blind run asks whether the outputs stay finite and
 * normal, not how they compare with a real run (there is none), so the
 * weights that have statistics are drawn, for this run only, from their
 * whole-tensor std, min and max at 4 significant bits and their mean to a
 * sixteenth of that std, without per-channel detail.  Copies whose present
 * weights differ below that - the fine-tunes of a model published without
 * its weight files, whose small inline tensors moved - share the check too;
 * later stages draw from the full statistics as before.
 *
 * Not eligible (the check runs with the file's names, as before): a model
 * with real weights only (its check reads the file's bytes: weight_memo.h's
 * file key covers it), one a test set feeds, one whose nested graphs hold
 * weights of their own, one whose labelling was approximate, and one with
 * an input or weight read only inside a nested graph.
 */
#ifndef PN_CHECK_FORM_H
#define PN_CHECK_FORM_H

#include "common/util.h"
#include "runtime/infer.h"
#include "schemas/ir.h"

typedef struct pn_check_form {
	pn_key key;
	int n_values;          /* of the main graph */
	char **draw;           /* per value: its canonical name, or NULL */
	int32_t *metas;        /* values with statistics, in canonical order */
	int n_metas;
	pn_wmeta *full;        /* between begin and end: each one's own statistics */
} pn_check_form;

/* The canonical form of m (typed by r under bind) for its blind check: 1 and
 * *f, 0 when m is not eligible (f empty), -1 when out of memory. */
int  pn_check_form_make(const pn_model *m, const pn_infer_result *r, const pn_dimbind *bind,
			pn_check_form *f);
/* The same form for any model with nodes, its key tagged by what it keys
 * (tag), for other runs that draw every weight from its coarse statistics
 * (variants.c's batch independence check): a model with real weights is
 * eligible too, since such runs never read the file's bytes.  Same return
 * convention. */
int  pn_run_form_make(const pn_model *m, const pn_infer_result *r, const pn_dimbind *bind,
		      const char *tag, pn_check_form *f);
void pn_check_form_free(pn_check_form *f);

/* A key of all that pn_check_form_make reads of m (typed by r under bind),
 * in the file's own terms: its values and nodes in file order, with their
 * names.  Two models with one file key have one check form, and the same
 * values under the same names in the same places, so a check of one is the
 * other's in file order (weight_memo.h's pn_weight_memo_get): a fine-tune
 * whose weights moved below the coarse statistics, or the one-sample form
 * of a shape variant, takes it without the canonical labelling.  1 and
 * *key, 0 when m is not eligible (no weight absent; eligibility that
 * needs the labelling is the form's), -1 when out of memory. */
int  pn_check_form_file_key(const pn_model *m, const pn_infer_result *r,
			    const pn_dimbind *bind, pn_key *key);
/* The same key for any model, tagged by what it keys (tag): 1 and *key,
 * 0 when a nested graph holds weights kept as statistics (the key would
 * not cover them), -1 when out of memory. */
int  pn_form_file_key(const pn_model *m, const pn_infer_result *r, const pn_dimbind *bind,
		      const char *tag, pn_key *key);

/* Every weight statistic of g's main graph made coarse, as a blind check
 * draws it, the full ones kept in full[value] (g->n_values of them; NULL:
 * not kept); pn_restore_weights puts them back. */
void pn_coarsen_weights(pn_graph *g, pn_wmeta *full);
void pn_restore_weights(pn_graph *g, const pn_wmeta *full);

/* For the length of the check's runs: m's draws seeded by f's names, and
 * its weights' statistics made coarse (pn_check_form_end puts them back,
 * keeping the correction scales the check set).  0, or -1 when out of
 * memory (nothing changed). */
int  pn_check_form_begin(pn_check_form *f, pn_model *m);
void pn_check_form_end(pn_check_form *f, pn_model *m);

/* The value of m's main graph with canonical name `name` among its outputs,
 * or -1. */
int  pn_check_form_output(const pn_check_form *f, const pn_graph *g, const char *name);

#endif
