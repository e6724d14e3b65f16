/* strategies.c - the table of partition strategies (one file each). */
#include <string.h>

#include "partition/partition.h"

const pn_strategy pn_strategies[] = {
	{"fusion", pn_partition_fusion},
	{"anchor", pn_partition_anchor},
	{"window", pn_partition_window},
	{"sole", pn_partition_sole},
};
const int pn_n_strategies = sizeof pn_strategies / sizeof *pn_strategies;

const pn_strategy *pn_strategy_find(const char *name)
{
	for (int i = 0; i < pn_n_strategies; i++)
		if (!strcmp(pn_strategies[i].name, name))
			return &pn_strategies[i];
	return NULL;
}
