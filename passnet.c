/*
 * passnet.c - the `passnet` command: global options, then dispatch to one
 * subcommand per file in cmd/, with the set-up its entry asks for (the
 * store opened read-only or writable, the thread count), the way git.c's
 * cmd_struct table says which builtins need a repository.
 */
#include <errno.h>
#include <limits.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "common/err.h"
#include "store/query.h"

typedef struct pn_cmd_entry {
	const char *name;
	const pn_cmd_spec *spec;
	unsigned flags;   /* PN_NEEDS_STORE, ... (cmd/cmd.h) */
} pn_cmd_entry;

#define PN_TABLE_ENTRY(id, name, flags) {name, &pn_cmd_##id, flags},
static const pn_cmd_entry commands[] = {PN_CMDS(PN_TABLE_ENTRY)};
#define N_COMMANDS (sizeof commands / sizeof *commands)

static pn_ctx ctx = {.db = "passnet.lmdb"};
static int threads = INT_MIN;   /* INT_MIN: -j not given */
static int verbose;

static const pn_option global_options[] = {
	PN_STRING(0, "db", "DIR", &ctx.db, "./passnet.lmdb", "the store"),
	PN_FLAG(0, "json", &ctx.json, "machine-readable output (JSON Lines)"),
	PN_INT('j', "threads", "N", &threads, "all cores", "threads for parallel work"),
	PN_FLAG('q', "quiet", &ctx.quiet, "quiet: no progress or summaries on stderr"),
	PN_FLAG('v', "verbose", &verbose,
		"verbose: print every warning a stage counts in its summary, one line each "
		"(`passnet ls --warnings` lists them afterwards)"),
	PN_OPT_TABLE_END,
};
static const pn_usage global_usage = {"passnet", "COMMAND [ARGS]", NULL, global_options};

static void usage(FILE *f)
{
	pn_usage_line(&global_usage, f);
	fprintf(f, "\npassnet mines ONNX models into a deduplicated store of subgraphs and\n"
		   "benchmark tasks.\n\ncommands:\n");
	for (size_t i = 0; i < N_COMMANDS; i++)
		fprintf(f, "  %-12s %s\n", commands[i].name, commands[i].spec->summary);
	fprintf(f, "\nglobal options:\n");
	pn_usage_options(global_options, f);
	fprintf(f, "\n`passnet COMMAND --help` describes a command.\n");
}

/* A command without options (dedup) has an empty table. */
static const pn_option no_options[] = {PN_OPT_TABLE_END};

static void command_usage(const pn_cmd_entry *e, pn_usage *u, char *prog, size_t cap)
{
	snprintf(prog, cap, "passnet %s", e->name);
	*u = (pn_usage){prog, e->spec->args, e->spec->details,
			e->spec->options ? e->spec->options : no_options};
}

/* A synopsis cell's text in Markdown: '|' would end the cell. */
static void markdown_code(const char *s, FILE *f)
{
	for (; *s; s++) {
		if (*s == '|')
			fputc('\\', f);
		fputc(*s, f);
	}
}

/* README's command table (tests/cli/readme_commands.sh compares them). */
static void markdown_table(FILE *f)
{
	fprintf(f, "| command | what it does |\n|---|---|\n");
	for (size_t i = 0; i < N_COMMANDS; i++) {
		const pn_cmd_spec *s = commands[i].spec;
		char syn[2048], prog[64];
		pn_usage u;
		command_usage(&commands[i], &u, prog, sizeof prog);
		pn_usage_synopsis(&u, syn, sizeof syn);
		fprintf(f, "| `%s%s", commands[i].name, *syn ? " " : "");
		markdown_code(syn, f);
		fprintf(f, "` | %s |\n", s->description ? s->description : s->summary);
	}
}

static const pn_cmd_entry *find_command(const char *name)
{
	for (size_t i = 0; i < N_COMMANDS; i++)
		if (!strcmp(name, commands[i].name))
			return &commands[i];
	return NULL;
}

/* `passnet help [--markdown | COMMAND]`. */
static int help(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "--markdown")) {
		markdown_table(stdout);
		return 0;
	}
	if (argc == 2 && find_command(argv[1])) {
		const pn_cmd_entry *e = find_command(argv[1]);
		char prog[64];
		pn_usage u;
		command_usage(e, &u, prog, sizeof prog);
		pn_usage_help(&u, stdout);
		return 0;
	}
	if (argc > 1) {
		fprintf(stderr, "passnet: help: '%s' is not a command\nusage: passnet help [--markdown | COMMAND]\n",
			argv[1]);
		return 2;
	}
	usage(stdout);
	return 0;
}

/* Opens what the entry asks for: a missing store read-only is named with
 * how to make one (pn_open_for_reading); other failures name it too. */
static int open_store(const pn_cmd_entry *e)
{
	char err[PN_ERRLEN];
	if (e->flags & PN_WRITES_STORE) {
		if (pn_store_open(&ctx.store, ctx.db, 0, err))
			return pn_die("%s", err);
	} else if (e->flags & PN_NEEDS_STORE) {
		if (pn_open_for_reading(ctx.db, &ctx.store, &ctx.txn))
			return 1;
	}
	return 0;
}

static void close_store(void)
{
	if (ctx.txn)
		pn_rtxn_end(ctx.txn);
	pn_store_close(ctx.store);
	ctx.txn = NULL;
	ctx.store = NULL;
}

static int run_command(const pn_cmd_entry *e, int argc, char **argv)
{
	const pn_cmd_spec *s = e->spec;
	if (!(e->flags & PN_USES_THREADS))
		ctx.threads = 0;
	char prog[64];
	pn_usage u;
	command_usage(e, &u, prog, sizeof prog);
	ctx.usage = &u;
	int n, rc = pn_parse_options(&u, argc - 1, argv + 1, 0, &n);
	if (rc == PN_PARSE_HELP)
		return 0;
	if (rc)
		return rc;
	ctx.argc = n;
	ctx.argv = argv + 1;
	if (n < s->min_args || (s->max_args >= 0 && n > s->max_args)) {
		if (n > s->max_args && s->max_args >= 0)
			return pn_usage_error(&u, "unexpected argument '%s'", ctx.argv[s->max_args]);
		return pn_usage_error(&u, "%s wanted", s->args);
	}
	if (s->check && (rc = s->check(&ctx)))
		return rc;
	if ((rc = open_store(e)))
		return rc;
	rc = s->run(&ctx);
	close_store();
	return rc;
}

/* Output that did not reach stdout (a full disk, a closed pipe) is a
 * failure, not a silent success. */
static int finish_stdout(int rc)
{
	int bad = fflush(stdout) != 0 || ferror(stdout);
	int e = errno;
	if (fclose(stdout) && !bad) {
		bad = 1;
		e = errno;
	}
	if (bad) {
		fprintf(stderr, "passnet: cannot write standard output: %s\n", strerror(e));
		return rc ? rc : 1;
	}
	return rc;
}

int main(int argc, char **argv)
{
	/* Kernels take scratch buffers per call; keeping freed blocks in the
	 * heap (instead of mmap/munmap for every large one) turns those calls
	 * into free-list reuse with no page faults on repeated runs. */
	mallopt(M_MMAP_THRESHOLD, 512 << 20);
	mallopt(M_TRIM_THRESHOLD, 1 << 30);
	/* The global options may stand anywhere on the line; what is left is
	 * the command and its own arguments. */
	int n;
	if (pn_parse_options(&global_usage, argc - 1, argv + 1, PN_PARSE_KEEP_UNKNOWN, &n))
		return 2;
	argc = n + 1;
	if (threads != INT_MIN && threads < 1) {
		fprintf(stderr, "passnet: --threads needs a positive number, got '%d'\n", threads);
		return 2;
	}
	ctx.threads = threads == INT_MIN ? 0 : threads;
	pn_quiet = ctx.quiet;
	pn_verbose = verbose;
	pn_json = ctx.json;
	int rc;
	if (argc < 2) {
		usage(stderr);
		return 2;
	} else if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(stdout);
		rc = 0;
	} else if (!strcmp(argv[1], "help")) {
		rc = help(argc - 1, argv + 1);
	} else {
		const pn_cmd_entry *e = find_command(argv[1]);
		if (!e) {
			fprintf(stderr, "passnet: '%s' is not a command (see passnet --help)\n", argv[1]);
			return 2;
		}
		rc = run_command(e, argc - 1, argv + 1);
	}
	return finish_stdout(rc);
}
