/* sole.c - the `sole` strategy: every compute node alone. */
#include "partition/partition.h"

#include <stdlib.h>

int pn_partition_sole(pn_pview *pv, pn_cuts *out)
{
	uint8_t *in_cut = calloc((size_t)pv->g->n_nodes + 1, 1);
	if (!in_cut)
		return -1;
	int rc = 0;
	for (int i = 0; i < pv->n && !rc; i++) {
		int32_t node = pv->order[i];
		if (pn_cut_ok(pv, &node, 1, in_cut))
			rc = pn_cuts_add(out, &node, 1);
	}
	free(in_cut);
	return rc;
}
