/*
 * stage_summary.c - the summary line of partition and dedup (pn_print_stage),
 * which `passnet partition`, `passnet dedup` and `passnet build` print.
 */
#include <stdio.h>
#include <string.h>

#include "cmd/cmd.h"
#include "partition/partition.h"
#include "partition/stage.h"

/* " and N shape variants", or nothing when there are none. */
static const char *variants_text(const pn_stage_stats *s, char *buf, size_t n)
{
	if (!s->variants)
		return "";
	snprintf(buf, n, " and %llu shape variants", (unsigned long long)s->variants);
	return buf;
}

void pn_print_stage(const char *stage, const pn_stage_stats *s, int json)
{
	char buf[64];
	if (json) {
		printf("{\"stage\":\"%s\",\"models\":%llu,\"variants\":%llu,\"structures\":%llu,"
		       "\"candidates\":%llu,"
		       "\"new_subgraphs\":%llu,\"collisions\":%llu,\"approximate\":%llu,\"failed\":%llu,"
		       "\"seconds\":%.3f}\n",
		       stage, (unsigned long long)s->models, (unsigned long long)s->variants,
		       (unsigned long long)s->structures, (unsigned long long)s->candidates,
		       (unsigned long long)s->new_subgraphs, (unsigned long long)s->collisions,
		       (unsigned long long)s->approximate, (unsigned long long)s->failed, s->seconds);
		return;
	}
	if (!strcmp(stage, "partition")) {
		/* models of a structure already cut add no candidates */
		printf("partition: %llu models%s (%llu new structures) cut into %llu candidates (",
		       (unsigned long long)s->models, variants_text(s, buf, sizeof buf),
		       (unsigned long long)s->structures, (unsigned long long)s->candidates);
		for (int i = 0; i < PN_N_STRATEGIES; i++)
			printf("%s%s %llu", i ? ", " : "", pn_strategies[i].name,
			       (unsigned long long)s->per_strategy[i]);
		printf("), %llu failed, %.2f s\n", (unsigned long long)s->failed, s->seconds);
	} else {
		printf("dedup: %llu candidates of %llu structures hashed: %llu new subgraphs, %llu "
		       "collisions, %llu approximate, %llu failed, %.2f s\n",
		       (unsigned long long)s->candidates, (unsigned long long)s->structures,
		       (unsigned long long)s->new_subgraphs, (unsigned long long)s->collisions,
		       (unsigned long long)s->approximate, (unsigned long long)s->failed, s->seconds);
	}
}

