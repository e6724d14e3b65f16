/*
 * gen_trial.c - the batch generalization pass over a folder of models, for
 * a report: for each MODEL.onnx given, decode it as the extract does
 * (weights as metadata), plan, generalize a second copy to batch 2 and run
 * the batch-independence check; one line per model: "ok", or the reason.
 *
 *   build/tools/gen_trial models/A/model.onnx models/B/model.onnx ...
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "extract/generalize.h"
#include "model/onnx.h"

static pn_model *decode(const char *path, char *err)
{
	void *bytes;
	size_t len;
	if (pn_read_file(path, &bytes, &len, err))
		return NULL;
	char dir[4096];
	snprintf(dir, sizeof dir, "%s", path);
	char *slash = strrchr(dir, '/');
	if (slash)
		*slash = 0;
	pn_fileio io = pn_dirio(slash ? dir : ".");
	pn_model *m = calloc(1, sizeof *m);
	pn_arena_init(&m->arena, 0);
	Onnx__ModelProto *mp = pn_onnx_unpack(bytes, len, &m->arena, err);
	pn_decode_opts o = {.weights_as_meta = 1};
	int rc = !mp || pn_onnx_resolve_external(mp, &io, m, err) < 0 ||
		 pn_model_from_proto(mp, &o, m, err);
	free(bytes);
	if (rc) {
		pn_model_free(m);
		return NULL;
	}
	return m;
}

int main(int argc, char **argv)
{
	int ok = 0;
	for (int i = 1; i < argc; i++) {
		char why[PN_ERRLEN] = "";
		int64_t base = 0;
		pn_model *m = decode(argv[i], why), *g = m ? decode(argv[i], why) : NULL;
		const char *verdict = "error";
		int rc = -1;
		if (m && g && (rc = pn_generalize_plan(m, &base, why)) == 0 &&
		    (rc = pn_generalize_batch(g, 2, why)) == 0 &&
		    (rc = pn_batch_independent(m, g, 2, 7, 1e-4, 1e-5, NULL, why)) == 0)
			verdict = "ok", ok++;
		else if (rc == 1)
			verdict = "cannot";
		printf("%s\t%s\t%s\n", argv[i], verdict, rc ? why : "");
		fflush(stdout);
		if (g)
			pn_model_free(g);
		if (m)
			pn_model_free(m);
	}
	printf("generalized: %d of %d\n", ok, argc - 1);
	return 0;
}
