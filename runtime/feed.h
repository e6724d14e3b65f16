/*
 * feed.h - the inputs a whole model runs on, and writing tensors as
 * backend-test .pb files.  Shared by `passnet run`, `passnet time` and the
 * value-ranges stage, which must agree on what "the model's inputs" are: input_N.pb files from a
 * folder, else the model's test_data_set_0 when it holds every input (an
 * empty or partial one is a folder not filled yet, not an input the model
 * takes), else seeded random inputs with
 * symbolic dims bound (unbound names are 1) and an integer scalar input the
 * binding names (a sample rate 'sr', extract/binding.h) at its bound value.
 */
#ifndef PN_FEED_H
#define PN_FEED_H

#include <stdint.h>

#include "schemas/ir.h"

typedef struct pn_feed {
	pn_tensor *const *v;   /* what to pass to pn_session_run */
	int n;
	int from_testset;      /* v borrows the model's test_data_set_0 */
	pn_tensor **owned;     /* tensors read or generated here (n of them) */
} pn_feed;

/* Whether m's first test set holds every input of m (then it is the feed,
 * and what the binding reads; extract/binding.h). */
int  pn_feed_has_testset(const pn_model *m);

/* Prepares the inputs of m: input_N.pb from dir when dir is not NULL, else
 * m's first test set when pn_feed_has_testset, else seeded random inputs. */
int  pn_feed_prepare(const pn_model *m, const char *dir, const pn_dimbind *bind, uint64_t seed,
		     pn_feed *f, char *err);
void pn_feed_free(pn_feed *f);

/* Writes t[0..n) as DIR/STEM_i.pb, each named after g's value values[i]
 * (dir is created if missing). */
int pn_write_pb_files(const char *dir, const char *stem, const pn_graph *g, const int *values,
		      pn_tensor *const *t, int n, char *err);

#endif
