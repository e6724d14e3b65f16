/*
 * headline.h - the corpus's compiler-regression share, passnet's analogue
 * of the published benchmark's headline (43% of real subgraphs slower
 * under TorchInductor than eager PyTorch): the share of the subgraphs ONNX
 * Runtime timed (exec/baseline.h, status "ok") that are flagged
 * compiler-regression, i.e. slower at ORT's default optimisation level
 * (ALL) than with its optimisations disabled.
 *
 * One count that `passnet baseline`, `passnet stats` and the report share,
 * so the three print the same figures: over every stored baseline ORT
 * timed (whatever its ORT version), in all, by size (the size groups of
 * pn_baseline_size_bucket) and by partition strategy (a subgraph counts in
 * each strategy one of whose cuts found it, so the strategies' counts may
 * add up to more than the whole).  When ORT timed none, the figure is "not
 * measured", never 0%.
 */
#ifndef PN_HEADLINE_H
#define PN_HEADLINE_H

#include <stdint.h>
#include <stdio.h>

#include "exec/baseline.h"
#include "passnet.pb-c.h"
#include "schemas/strategies.h"
#include "store/store.h"

#define PN_PUBLISHED_SHARE_PCT 43
#define PN_PUBLISHED_COMPILER "TorchInductor"

/* regressions of the timed subgraphs of one group */
typedef struct pn_share {
	int64_t timed, regressions;
} pn_share;

typedef struct pn_headline {
	int64_t baselines;                       /* profiles with a baseline, timed or not */
	pn_share all;
	pn_share size[PN_BASELINE_SIZES];        /* pn_baseline_size_names order */
	pn_share strategy[PN_N_STRATEGIES];      /* schemas/strategies.def order */
} pn_headline;

/* Counts the profile of subgraph key (its occurrences give its
 * strategies) into h; a profile without a baseline counts nothing.  -1 on
 * a read error. */
int pn_headline_add(pn_rtxn *t, const uint8_t key[16], const Passnet__Profile *p, pn_headline *h);
/* h over every profile of the store: 0, or -1 with err set. */
int pn_headline_read(pn_rtxn *t, pn_headline *h, char *err);

/* 1 when ORT timed at least one subgraph, so there is a share to give. */
int pn_headline_measured(const pn_headline *h);
/* 100 * regressions / timed (0 for an empty group). */
double pn_share_pct(pn_share s);
/* The one sentence: "X% of N timed subgraphs are slower with ONNX
 * Runtime's default optimisations than without (published: 43% under
 * TorchInductor)", or when nothing was timed, that the baseline was not
 * measured and how to measure it. */
void pn_headline_sentence(const pn_headline *h, char *buf, size_t cap);

/* Text: the sentence, then when measured one line by size and one by
 * strategy ("fusion 12.5% of 8; ..."), each line after prefix. */
void pn_headline_print(FILE *f, const pn_headline *h, const char *prefix);
/* JSON: the member "headline":{...} (no separator before or after). */
void pn_headline_json(FILE *f, const pn_headline *h);

#endif
