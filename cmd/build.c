/*
 * build.c - `passnet build`: every stage, in order, over the same store.
 * Each stage does only what is not done yet, so building again after adding
 * a source costs only that source's models.
 */
#include <stdio.h>
#include <stdlib.h>

#include "cmd/cmd.h"
#include "common/err.h"
#include "store/query.h"

static const char usage[] =
	"usage: passnet build [--manifest FILE [--offline]] [--dim NAME=V]... [--strategy LIST] [PATH...]\n"
	"\n"
	"Runs extract (see `passnet extract --help`), partition (with the\n"
	"strategies of LIST, default all) and dedup, then prints a summary.\n";

int cmd_build(int argc, char **argv, const pn_cli *cli)
{
	if (pn_wants_help(argc, argv, usage))
		return 0;
	char *strategy = NULL;
	int rc = pn_run_extract(argc, argv, cli, usage, &strategy);
	if (!rc)
		rc = pn_run_partition(cli, strategy);
	if (!rc)
		rc = pn_run_dedup(cli);
	free(strategy);
	return rc;
}
