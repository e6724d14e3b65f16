/*
 * canon_seeds.c - seeds for the canon_decode harness: the canonical bytes
 * of real subgraphs, as dedup stores them.  `canon_seeds OUT MODEL...`
 * writes, for each model, the canonical form of its first cuts of every
 * strategy to OUT/<hash>.canon (a few per model: the seeds stay small).
 */
#include <stdio.h>
#include <stdlib.h>

#include "canon/form.h"
#include "common/err.h"
#include "model/onnx.h"
#include "partition/partition.h"

#define CUTS_PER_STRATEGY 2

static void write_form(const char *out, const pn_form *f)
{
	char hex[33], path[4096];
	pn_key_hex(&f->hash, hex);
	snprintf(path, sizeof path, "%s/%s.canon", out, hex);
	FILE *fp = fopen(path, "wb");
	if (!fp || fwrite(f->bytes, 1, f->len, fp) != f->len)
		fprintf(stderr, "canon_seeds: cannot write %s\n", path);
	if (fp)
		fclose(fp);
}

static void seeds_of_view(const char *out, pn_pview *pv, const pn_graph *g,
			  const pn_infer_result *r)
{
	char err[PN_ERRLEN];
	for (int s = 0; s < PN_N_STRATEGIES; s++) {
		pn_cuts cuts = {0};
		if (!pn_strategies[s].run(pv, &cuts))
			for (int i = 0; i < cuts.n && i < CUTS_PER_STRATEGY; i++) {
				pn_form f;
				if (pn_form_of_cut(g, r, cuts.nodes[i], cuts.len[i], &f, err))
					continue;
				write_form(out, &f);
				pn_form_free(&f);
			}
		pn_cuts_free(&cuts);
	}
}

static void seeds_of_model(const char *out, const char *path)
{
	char err[PN_ERRLEN];
	void *bytes;
	size_t len;
	pn_model *m = pn_model_new();
	if (!m || pn_read_file(path, &bytes, &len, err)) {
		pn_model_free(m);
		return;
	}
	Onnx__ModelProto *mp = pn_onnx_unpack(bytes, len, &m->arena, err);
	pn_decode_opts o = {.weights_as_meta = 1};
	pn_infer_result r;
	if (mp && !pn_model_from_proto(mp, &o, m, err) &&
	    !pn_infer_graph(m->graph, NULL, NULL, &r, err)) {
		pn_pview pv = {0};
		if (!pn_pview_build(&pv, m->graph, &r, err))
			seeds_of_view(out, &pv, m->graph, &r);
		pn_pview_free(&pv);
		pn_infer_result_free(&r);
	}
	free(bytes);
	pn_model_free(m);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: canon_seeds OUT MODEL...\n");
		return 2;
	}
	for (int i = 2; i < argc; i++)
		seeds_of_model(argv[1], argv[i]);
	return 0;
}
