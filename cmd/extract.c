/*
 * extract.c - `passnet extract [--manifest FILE] [PATH...]`: models into the store.
 */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "common/err.h"
#include "common/shard.h"
#include "extract/extract.h"
#include "extract/run.h"
#include "extract/sources.h"
#include "extract/variants.h"
#include "store/warnings.h"
#include "schemas/ir.h"

/* Options live here, not on a stack: passnet.c parses them from the table
 * before calling run (one command per process). */
static struct {
	const char *manifest;
	pn_dimbind bind;
	pn_source_spec *src;     /* PATHs, then the manifest's sources */
	char **names;            /* source names made for the PATHs */
	int n;
	pn_manifest_entry *me;
	int nme;
	int offline;
	int variants;
	int no_weight_check;
} xo = {.variants = PN_VARIANTS_DEFAULT};

const pn_option pn_extract_options[] = {
	PN_STRING(0, "manifest", "FILE", &xo.manifest, NULL,
		  "the sources listed in FILE (see data-manifest.txt); checksums are verified, a "
		  "mismatch skips that source; npm, deb and url sources not in the cache are "
		  "fetched first (see `passnet fetch --help`)"),
	PN_FLAG(0, "offline", &xo.offline,
		"use the cache only: a remote source not there is an error of that source"),
	PN_CALLBACK(0, "dim", "NAME=V", &xo.bind, pn_opt_dim, "1",
		    "value of a symbolic input dim for shape inference; recorded with each model "
		    "stored"),
	PN_INT(0, "variants", "N", &xo.variants, "9",
	       "shape variants made of each new model: the same model at up to N further "
	       "bindings (symbolic dims), or at other batches (a fixed batch generalized), each "
	       "validated and stored as a model of its own; 0 for none (at most 9)"),
	PN_FLAG(0, "no-weight-check", &xo.no_weight_check,
		"do not run each new model to check its regenerated weights against its real "
		"ones (extract/weight_scale.h): much faster on a hub of fine-tunes, but the "
		"regenerated values go unchecked and unrescaled"),
	PN_CALLBACK1(0, "shard", "K/N", &pn_cmd_shard, pn_opt_shard, "0/1: every file",
		    "only the model files whose place (source, path) falls in shard K of N "
		    "(docs/machines.md); build then partitions and dedups all this "
		    "store holds"),
	PN_OPT_TABLE_END,
};

static void print_summary(const pn_extract_stats *s, int json)
{
	if (json) {
		printf("{\"files\":%llu,\"new\":%llu,\"known\":%llu,\"duplicates\":%llu,"
		       "\"failed\":%llu,\"source_errors\":%llu,\"bytes\":%llu,\"variants\":%llu,"
		       "\"warned\":%llu,\"checks_reused\":%llu,\"checks_booked\":%llu,"
		       "\"variants_reused\":%llu,\"independence_reused\":%llu,\"seconds\":%.3f}\n",
		       (unsigned long long)s->files, (unsigned long long)s->new_models,
		       (unsigned long long)s->known, (unsigned long long)s->duplicates,
		       (unsigned long long)s->failed, (unsigned long long)s->source_errors,
		       (unsigned long long)s->bytes, (unsigned long long)s->variants,
		       (unsigned long long)s->warned, (unsigned long long)s->checks_reused,
		       (unsigned long long)s->checks_booked, (unsigned long long)s->variants_reused,
		       (unsigned long long)s->independence_reused, s->seconds);
		return;
	}
	printf("extract: %llu model files: %llu new models, %llu already stored, %llu duplicates, "
	       "%llu failed; %llu unreadable sources or members; %llu shape variants (%.1f MB decoded "
	       "in %.2f s)",
	       (unsigned long long)s->files, (unsigned long long)s->new_models,
	       (unsigned long long)s->known, (unsigned long long)s->duplicates,
	       (unsigned long long)s->failed, (unsigned long long)s->source_errors,
	       (unsigned long long)s->variants, (double)s->bytes / 1e6, s->seconds);
	if (s->checks_reused)
		printf("; %llu weight checks reused (the same file less who made it, or the same "
		       "structure without its weight files, was checked this run)",
		       (unsigned long long)s->checks_reused);
	if (s->checks_booked)
		printf("; %llu blind weight checks answered by another model's run (its outputs "
		       "were computed alike this run)",
		       (unsigned long long)s->checks_booked);
	if (s->variants_reused)
		printf("; %llu models' shape variants reused (a copy of the same file key chose "
		       "them this run)",
		       (unsigned long long)s->variants_reused);
	if (s->independence_reused)
		printf("; %llu batch independence checks reused (a renamed or reordered copy "
		       "was checked this run)",
		       (unsigned long long)s->independence_reused);
	pn_warning_clause(stdout, (int64_t)s->warned, "model", NULL);
	printf("\n");
}

/* A path argument becomes a source named after it (trailing '/' dropped). */
static char *source_name(const char *path)
{
	char *s = strdup(path);
	size_t l = strlen(s);
	while (l > 1 && s[l - 1] == '/')
		s[--l] = 0;
	return s;
}

/* The sources, from the PATHs and the manifest, before the store is
 * opened: a bad manifest fails without touching it. */
int pn_check_extract(pn_ctx *ctx)
{
	char err[PN_ERRLEN] = "";
	int n = 0;
	xo.src = calloc((size_t)ctx->argc + 1, sizeof(*xo.src));
	xo.names = calloc((size_t)ctx->argc + 1, sizeof(char *));
	if (!xo.src || !xo.names)
		return pn_die("out of memory");
	for (int i = 0; i < ctx->argc; i++) {
		xo.names[n] = source_name(ctx->argv[i]);
		xo.src[n] = (pn_source_spec){.name = xo.names[n], .location = ctx->argv[i]};
		n++;
	}
	if (xo.manifest) {
		if (pn_manifest_read(xo.manifest, &xo.me, &xo.nme, err))
			return pn_die("%s", err);
		pn_source_spec *all = realloc(xo.src, sizeof(*xo.src) * (size_t)(n + xo.nme + 1));
		if (!all)
			return pn_die("out of memory");
		xo.src = all;
		for (int i = 0; i < xo.nme; i++)
			xo.src[n++] = (pn_source_spec){xo.me[i].name, xo.me[i].kind, xo.me[i].location,
						       xo.me[i].checksum, xo.me[i].licence, xo.me[i].note,
						       NULL, xo.me[i].group};
	}
	if (!n)
		return pn_usage_error(ctx->usage, "PATH or --manifest FILE wanted");
	if (xo.variants < 0 || xo.variants > PN_VARIANTS_MAX)
		return pn_usage_error(ctx->usage, "--variants wants 0 to 9");
	xo.n = n;
	return 0;
}

/* Runs extract (extract/run.c) on ctx->store; `passnet build` shares it. */
int pn_call_extract(pn_ctx *ctx)
{
	char err[PN_ERRLEN] = "";
	pn_extract_opts o = {.offline = xo.offline, .threads = ctx->threads,
			     .ingest = {&xo.bind, xo.variants, xo.no_weight_check},
			     .shard = &pn_cmd_shard};
	pn_extract_stats stats;
	int rc = pn_fetch_and_extract(ctx->store, xo.src, xo.n, &o, &stats, err);
	pn_dimbind_free(&xo.bind);
	if (!rc)
		print_summary(&stats, ctx->json);
	for (int i = 0; xo.names[i]; i++)
		free(xo.names[i]);
	free(xo.names);
	free(xo.src);
	pn_manifest_free(xo.me, xo.nme);
	/* what extract's threads freed goes back to the system, so the stages
	 * build runs after it do not start with its peak as their floor */
	malloc_trim(0);
	return rc ? pn_die("extract: %s", err) : 0;
}

const pn_cmd_spec pn_cmd_extract = {
	.options = pn_extract_options,
	.args = "[PATH...]",
	.max_args = -1,
	.summary = "ingest models from files, directories, archives or a manifest",
	.description = "ingest models from `.onnx` files, TorchScript archives (`.pt`, `.pth`, "
		       "`.jit`; docs/sources.md), directories and archives (`.tar`, "
		       "`.tar.gz`, `.tgz`, `.tar.xz`, `.tar.bz2`, `.zip`, `.mar`, nested) into the store; "
		       "only new or changed files are decoded",
	.details = "Ingests every model found in the sources into the store: .onnx files and\n"
		   "TorchScript archives (.pt, .pth, .jit, .torchscript: torch.jit.save's zip,\n"
		   "lowered to ONNX; a torch.export .pt2 is recorded as not read), directories (recursive) and archives (.tar, .tar.gz, .tgz,\n"
		   ".tar.xz, .tar.bz2, .zip, .mar, nested too); each PATH is a source named\n"
		   "after the path.\n"
		   "Only new or changed files are decoded; a second run over the same sources\n"
		   "reports 0 new models.  Bad models are reported on stderr, kept in the\n"
		   "errors table, and the run goes on.  Exit status 1 only if the store\n"
		   "itself fails.\n",
	.check = pn_check_extract,
	.run = pn_call_extract,
};
