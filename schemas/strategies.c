/* strategies.c - the strategy catalogue's names (schemas/strategies.def). */
#include "schemas/strategies.h"

#include <string.h>

_Static_assert(PN_N_STRATEGIES <= 32, "strategy masks are unsigned ints");

const char *const pn_strategy_names[PN_N_STRATEGIES] = {
#define PN_STRATEGY(name, summary) #name,
#include "schemas/strategies.def"
#undef PN_STRATEGY
};

const char *const pn_strategy_summaries[PN_N_STRATEGIES] = {
#define PN_STRATEGY(name, summary) summary,
#include "schemas/strategies.def"
#undef PN_STRATEGY
};

int pn_strategy_index(const char *name)
{
	for (int i = 0; name && i < PN_N_STRATEGIES; i++)
		if (!strcmp(pn_strategy_names[i], name))
			return i;
	return -1;
}

int pn_strategy_mask(const char *list, unsigned *mask)
{
	*mask = 0;
	const char *p = list;
	while (*p) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		int found = -1;
		for (int i = 0; i < PN_N_STRATEGIES && found < 0; i++)
			if (strlen(pn_strategy_names[i]) == len && !strncmp(pn_strategy_names[i], p, len))
				found = i;
		if (found < 0)
			return -1;
		*mask |= 1u << found;
		if (!end)
			break;
		p = end + 1;
	}
	return 0;
}
