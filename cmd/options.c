/* options.c - the small option parser the subcommands share. */
#include <stdio.h>
#include <string.h>

#include "cmd/cmd.h"

int pn_wants_help(int argc, char **argv, const char *usage)
{
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			fputs(usage, stdout);
			return 1;
		}
	return 0;
}

const char *pn_opt_value(int argc, char **argv, int *i, const char *name)
{
	size_t l = strlen(name);
	const char *a = argv[*i];
	if (strncmp(a, name, l))
		return NULL;
	if (a[l] == '=')
		return a + l + 1;
	if (a[l] == 0 && *i + 1 < argc)
		return argv[++*i];
	return NULL;
}
