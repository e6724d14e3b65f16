#include <stdio.h>
#include "cmd/cmd.h"
int cmd_ls(int argc, char **argv, const pn_cli *cli)
{
	(void)argc; (void)argv; (void)cli;
	fprintf(stderr, "passnet: ls: not written yet\n");
	return 1;
}
