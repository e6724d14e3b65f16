/*
 * window.c - the `window` strategy: every run of 2..PN_WINDOW_MAX
 * consecutive nodes of the canonical topological order that is connected
 * and convex.  The canonical order comes from the graph's structure, so the
 * windows do not depend on the order nodes are listed in the file.
 */
#include "partition/partition.h"

#include <stdlib.h>

int pn_partition_window(pn_pview *pv, pn_cuts *out)
{
	uint8_t *in_cut = calloc((size_t)pv->g->n_nodes + 1, 1);
	if (!in_cut)
		return -1;
	int rc = 0;
	for (int start = 0; start < pv->n && !rc; start++)
		for (int len = 2; len <= PN_WINDOW_MAX && start + len <= pv->n && !rc; len++) {
			const int32_t *run = pv->order + start;
			if (pn_cut_connected(pv, run, len, in_cut) && pn_cut_ok(pv, run, len, in_cut))
				rc = pn_cuts_add(out, run, len);
		}
	free(in_cut);
	return rc;
}
