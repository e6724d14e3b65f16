/*
 * passnet.c - the `passnet` command: global options, then dispatch to one
 * subcommand per file in cmd/.
 */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "common/err.h"

typedef struct command {
	const char *name;
	int (*fn)(int argc, char **argv, const pn_cli *cli);
	const char *summary;
} command;

#define PN_TABLE_ENTRY(name, summary) {#name, cmd_##name, summary},
static const command commands[] = {PN_CMDS(PN_TABLE_ENTRY)};

/* Commands are C identifiers in the table; users type '-' for '_'. */
static void command_name(const char *id, char *out, size_t cap)
{
	snprintf(out, cap, "%s", id);
	for (char *p = out; *p; p++)
		if (*p == '_')
			*p = '-';
}

static void usage(FILE *f)
{
	fprintf(f, "usage: passnet [--db DIR] [--json] [-j N] [-q] COMMAND [ARGS]\n\n"
		   "passnet mines ONNX models into a deduplicated store of subgraphs and\n"
		   "benchmark tasks.\n\ncommands:\n");
	for (size_t i = 0; i < sizeof commands / sizeof *commands; i++) {
		char name[32];
		command_name(commands[i].name, name, sizeof name);
		fprintf(f, "  %-12s %s\n", name, commands[i].summary);
	}
	fprintf(f, "\nglobal options:\n"
		   "  --db DIR       the store (default ./passnet.lmdb)\n"
		   "  --json         machine-readable output (JSON Lines)\n"
		   "  -j, --threads N  threads for parallel work (default: all cores)\n"
		   "  -q             quiet: no progress or summaries on stderr\n"
		   "\n`passnet COMMAND --help` describes a command.\n");
}

/* Takes the global options out of argv (anywhere on the line), so every
 * command sees only its own. */
static int take_globals(int *argc, char **argv, pn_cli *cli)
{
	int out = 1;
	for (int i = 1; i < *argc; i++) {
		const char *a = argv[i], *v;
		if (!strcmp(a, "--")) {
			while (i < *argc)
				argv[out++] = argv[i++];
			break;
		}
		if ((v = pn_opt_value(*argc, argv, &i, "--db"))) {
			cli->db = v;
		} else if (!strcmp(a, "--json")) {
			cli->json = 1;
		} else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
			cli->quiet = 1;
		} else if ((v = pn_opt_value(*argc, argv, &i, "--threads")) ||
			   (v = pn_opt_value(*argc, argv, &i, "-j")) ||
			   (!strncmp(a, "-j", 2) && a[2] >= '0' && a[2] <= '9' && (v = a + 2))) {
			cli->threads = atoi(v);
			if (cli->threads < 1)
				return pn_die("--threads needs a positive number, got '%s'", v), -1;
		} else {
			argv[out++] = argv[i];
		}
	}
	*argc = out;
	argv[out] = NULL;
	return 0;
}

int main(int argc, char **argv)
{
	pn_cli cli = {.db = "passnet.lmdb"};
	/* Kernels take scratch buffers per call; keeping freed blocks in the
	 * heap (instead of mmap/munmap for every large one) turns those calls
	 * into free-list reuse with no page faults on repeated runs. */
	mallopt(M_MMAP_THRESHOLD, 512 << 20);
	mallopt(M_TRIM_THRESHOLD, 1 << 30);
	if (take_globals(&argc, argv, &cli))
		return 2;
	pn_quiet = cli.quiet;
	pn_json = cli.json;
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
	    !strcmp(argv[1], "help")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	for (size_t i = 0; i < sizeof commands / sizeof *commands; i++) {
		char name[32];
		command_name(commands[i].name, name, sizeof name);
		if (!strcmp(argv[1], name))
			return commands[i].fn(argc - 1, argv + 1, &cli);
	}
	fprintf(stderr, "passnet: '%s' is not a command (see passnet --help)\n", argv[1]);
	return 2;
}
