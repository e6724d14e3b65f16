/*
 * extract.c - `passnet extract [--manifest FILE] [PATH...]`.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "common/err.h"
#include "extract/extract.h"
#include "extract/sources.h"
#include "schemas/ir.h"

static const char usage[] =
	"usage: passnet extract [--manifest FILE [--offline]] [--dim NAME=V]... [PATH...]\n"
	"\n"
	"Ingests every *.onnx model found in the sources into the store: .onnx\n"
	"files, directories (recursive) and archives (.tar, .tar.gz, .tgz, .tar.xz,\n"
	".tar.bz2, .zip, nested too).  Only new or changed files are decoded; a\n"
	"second run over the same sources reports 0 new models.\n"
	"  --manifest FILE  the sources listed in FILE (see data-manifest.txt);\n"
	"                   checksums are verified, a mismatch skips that source;\n"
	"                   npm, deb and url sources not in the cache are fetched\n"
	"                   first (see `passnet fetch --help`)\n"
	"  --offline        use the cache only; a source not there is an error\n"
	"  PATH             a source named after the path\n"
	"  --dim NAME=V     value of a symbolic input dim for shape inference\n"
	"                   (default 1); recorded with each model stored\n"
	"Bad models are reported on stderr, kept in the errors table, and the run\n"
	"goes on.  Exit status 1 only if the store itself fails.\n";

static void print_summary(const pn_extract_stats *s, int json)
{
	if (json) {
		printf("{\"files\":%llu,\"new\":%llu,\"known\":%llu,\"duplicates\":%llu,"
		       "\"failed\":%llu,\"source_errors\":%llu,\"bytes\":%llu,\"seconds\":%.3f}\n",
		       (unsigned long long)s->files, (unsigned long long)s->new_models,
		       (unsigned long long)s->known, (unsigned long long)s->duplicates,
		       (unsigned long long)s->failed, (unsigned long long)s->source_errors,
		       (unsigned long long)s->bytes, s->seconds);
		return;
	}
	printf("extract: %llu model files: %llu new models, %llu already stored, %llu duplicates, "
	       "%llu failed; %llu unreadable sources or members (%.1f MB decoded in %.2f s)\n",
	       (unsigned long long)s->files, (unsigned long long)s->new_models,
	       (unsigned long long)s->known, (unsigned long long)s->duplicates,
	       (unsigned long long)s->failed, (unsigned long long)s->source_errors,
	       (double)s->bytes / 1e6, s->seconds);
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

/* Parses extract's arguments and runs it.  `passnet build` shares this and
 * takes --strategy too (strategy != NULL). */
int pn_run_extract(int argc, char **argv, const pn_cli *cli, const char *use, char **strategy)
{
	const char *manifest = NULL, *v;
	pn_dimbind bind = {0};
	int n = 0, offline = 0;
	pn_source_spec *src = calloc((size_t)argc + 1, sizeof(*src));
	char **names = calloc((size_t)argc + 1, sizeof(char *));
	for (int i = 1; i < argc; i++) {
		if ((v = pn_opt_value(argc, argv, &i, "--manifest"))) {
			manifest = v;
		} else if ((v = pn_opt_value(argc, argv, &i, "--dim"))) {
			if (pn_parse_dim(&bind, v))
				return pn_die("--dim wants NAME=V, got '%s'", v);
		} else if (strategy && (v = pn_opt_value(argc, argv, &i, "--strategy"))) {
			free(*strategy);
			*strategy = strdup(v);
		} else if (!strcmp(argv[i], "--offline")) {
			offline = 1;
		} else if (argv[i][0] == '-') {
			fputs(use, stderr);
			return 2;
		} else {
			names[n] = source_name(argv[i]);
			src[n] = (pn_source_spec){.name = names[n], .location = argv[i]};
			n++;
		}
	}
	pn_manifest_entry *me = NULL;
	int nme = 0;
	char err[PN_ERRLEN] = "";
	if (manifest) {
		if (pn_manifest_read(manifest, &me, &nme, err))
			return pn_die("%s", err);
		pn_source_spec *all = realloc(src, sizeof(*src) * (size_t)(n + nme + 1));
		if (!all)
			return pn_die("out of memory");
		src = all;
		for (int i = 0; i < nme; i++)
			src[n++] = (pn_source_spec){me[i].name, me[i].kind, me[i].location,
						    me[i].checksum, me[i].licence, me[i].note, NULL};
	}
	if (!n) {
		fputs(use, stderr);
		return 2;
	}
	pn_fetched *fetched = calloc((size_t)n, sizeof *fetched);
	if (!fetched)
		return pn_die("out of memory");
	pn_fetch_remote(src, n, offline, 0, fetched);
	pn_store *st = NULL;
	if (pn_store_open(&st, cli->db, 0, err))
		return pn_die("%s", err);
	pn_extract_stats stats;
	int rc = pn_extract(st, src, n, cli->threads, &bind, &stats, err);
	pn_dimbind_free(&bind);
	pn_store_close(st);
	if (!rc)
		print_summary(&stats, cli->json);
	for (int i = 0; names[i]; i++)
		free(names[i]);
	free(names);
	for (int i = 0; i < n; i++)
		pn_fetched_clear(&fetched[i]);
	free(fetched);
	free(src);
	pn_manifest_free(me, nme);
	return rc ? pn_die("extract: %s", err) : 0;
}

int cmd_extract(int argc, char **argv, const pn_cli *cli)
{
	if (pn_wants_help(argc, argv, usage))
		return 0;
	return pn_run_extract(argc, argv, cli, usage, NULL);
}
