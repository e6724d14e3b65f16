/* strategies.c - the strategies of schemas/strategies.def bound to the
 * functions that run them (one file each: partition/<name>.c). */
#include "partition/partition.h"

const pn_strategy pn_strategies[PN_N_STRATEGIES] = {
#define PN_STRATEGY(name, summary) {#name, pn_partition_##name},
#include "schemas/strategies.def"
#undef PN_STRATEGY
};

const pn_strategy *pn_strategy_find(const char *name)
{
	int i = pn_strategy_index(name);
	return i < 0 ? NULL : &pn_strategies[i];
}
