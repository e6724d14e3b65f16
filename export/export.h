/*
 * export.h - curated benchmark task sets (`passnet export`), and the tools
 * users score candidates with (`passnet check`, `passnet score`).
 *
 * Layout of an export directory DIR (everything deterministic for a given
 * store and seed):
 *
 *   DIR/MANIFEST.tsv                 path, size, XXH3-128 and SHA-256 of every
 *                                    other file (tab separated, sorted by path)
 *   DIR/splits/train.csv, val.csv, test.csv
 *                                    task_id,pattern,variants,ops,flags
 *   DIR/tasks/<task-id>/task.json    see below
 *   DIR/tasks/<task-id>/<variant>/model.onnx
 *   DIR/tasks/<task-id>/<variant>/test_data_set_0/input_N.pb, output_N.pb
 *
 * <task-id> is "t<NNNN>-<first 12 hex digits of the pattern hash>" (NNNN:
 * rank in the selection, from 0001); <variant> is "v<NN>-<first 12 hex of the
 * subgraph hash>" (NN from 01, variants ordered by size).  Variant folders
 * follow the ONNX backend-test layout: model.onnx has its weights as
 * initializers (regenerated from metadata with the export seed), the test
 * set holds seeded inputs and passnet's reference outputs.
 *
 * task.json (one object, keys in this order):
 *   "task": task id, "pattern": pattern hash (32 hex), "split": "train"|"val"|"test",
 *   "ops": [op types of the pattern, canonical order],
 *   "flags": [flags shared by the variants' profiles],
 *   "seed": export seed (weights and exported inputs),
 *   "check_seed_rule": how `passnet check` derives fresh inputs (text),
 *   "tolerance": {"float32": {"rtol": "10^(5.886t/5)", "atol": "10^t"}, ...},
 *   "variants": [ {"name", "hash", "inputs": [{"name","dtype","shape"}],
 *                  "outputs": [...], "flops", "bytes_fused", "bytes_unfused",
 *                  "baseline_us" (passnet's median), "baseline_threads",
 *                  "bound_fused_us", "occurrences", "models": [{"source","path"}]} ]
 *
 * Results (`passnet check` writes, `passnet score` reads): JSON Lines, one
 * object per (task, variant) sample:
 *   {"task","variant","dtype": output dtype name ("float32", ...),
 *    "error_class": "none"|"accuracy"|"nan_inf"|"shape"|"dtype"|"runtime"|"cheat",
 *    "pass_level": least tolerance level t in -10..4 at which every output is
 *                  within tolerance (null if none or not comparable),
 *    "max_abs", "max_rel", "speedup": reference time / candidate time,
 *    "time_ref_us", "time_cand_us", "reason": text when not "none"}
 * error_class is "none" whenever pass_level is not null: which levels count
 * as correct is the scorer's decision (export/score.h), so "accuracy" means
 * no level up to 4 passes.  Numbers that were not measured or are not
 * finite are null (speedup and times when the candidate did not run,
 * max_abs/max_rel when shapes or types differ); "reason" is "" when there
 * is nothing to say, and also explains a "none" result obtained on the
 * exported inputs (a candidate given as outputs, not as a model).
 */
#ifndef PN_EXPORT_H
#define PN_EXPORT_H

#include <stdint.h>

#include <stddef.h>

#include "store/store.h"

/* The tolerance ladder of the ES_t score: levels t = -10..4. */
#define PN_TOL_MIN_LEVEL (-10)
#define PN_TOL_MAX_LEVEL 4

/* Writes a subgraph (its canonical bytes) as a standalone ONNX file: graph
 * inputs and outputs its boundary, weights kept as metadata regenerated
 * with seed as initializers (exactly the values the executor uses). */
int pn_export_subgraph_onnx(const uint8_t *canon, size_t len, uint64_t seed, const char *path,
			    char *err);
/* The same as a dtype variant: dtype PN_FLOAT is the subgraph as stored,
 * PN_FLOAT16 or PN_BFLOAT16 its variant by the rule above (1 with the
 * reason in err when the rule makes none).  path NULL: only sees whether
 * the variant can be made. */
int pn_export_subgraph_onnx_as(const uint8_t *canon, size_t len, uint64_t seed, int dtype,
			       const char *path, char *err);

/* How `passnet check` derives its fresh inputs from task.json's "seed"; the
 * exporter writes this text as "check_seed_rule" (export/check.c implements
 * it as pn_check_seed). */
#define PN_CHECK_SEED_RULE \
	"XXH64 (seed 0) of the text passnet-check/<seed>/<variant>/<k>, where <seed> is " \
	"this task's seed in decimal, <variant> the variant folder name and k the input " \
	"set (0: outputs compared and timed; 1: only to see that outputs follow inputs); " \
	"each input is then drawn with that seed by pn_input_for on the reference graph"

/* rtol and atol at level t for a dtype (float32, float16, bfloat16, float64;
 * other dtypes use the float32 ladder). */
void pn_tolerance(int dtype, int level, double *rtol, double *atol);

#endif
