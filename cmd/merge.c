/*
 * merge.c - `passnet --db OUT merge IN...`: shard stores into one
 * (store/merge.h has the rules of each table).
 */
#include <stdio.h>

#include "cmd/cmd.h"
#include "common/err.h"
#include "common/util.h"
#include "dedup/blocks.h"
#include "store/merge.h"

static int strict;

static const pn_option options[] = {
	PN_FLAG(0, "strict", &strict, "exit 1 when any record conflicted"),
	PN_OPT_TABLE_END,
};

static pn_merge_counts total_of(const pn_merge_stats *s)
{
	pn_merge_counts t = {0};
	for (int i = 0; i < PN_T_COUNT; i++) {
		t.added += s->table[i].added;
		t.equal += s->table[i].equal;
		t.resolved += s->table[i].resolved;
		t.conflicts += s->table[i].conflicts;
	}
	return t;
}

static void print_json(const pn_merge_stats *s, int failed, const pn_stage_stats *kept)
{
	pn_merge_counts t = total_of(s);
	printf("{\"stage\":\"merge\",\"inputs\":%llu,\"unreadable\":%d,\"added\":%llu,"
	       "\"equal\":%llu,\"resolved\":%llu,\"conflicts\":%llu,\"recounted\":%llu,"
	       "\"blocks_kept\":%llu,\"tables\":{",
	       (unsigned long long)s->inputs, failed, (unsigned long long)t.added,
	       (unsigned long long)t.equal, (unsigned long long)t.resolved,
	       (unsigned long long)t.conflicts, (unsigned long long)s->recounted,
	       (unsigned long long)kept->candidates);
	for (int i = 0; i < PN_T_COUNT; i++) {
		const pn_merge_counts *c = &s->table[i];
		printf("%s\"%s\":{\"added\":%llu,\"equal\":%llu,\"resolved\":%llu,\"conflicts\":%llu}",
		       i ? "," : "", pn_table_name(i), (unsigned long long)c->added,
		       (unsigned long long)c->equal, (unsigned long long)c->resolved,
		       (unsigned long long)c->conflicts);
	}
	printf("}}\n");
}

/* One line: the totals, then "table added/equal/resolved/conflicts" for
 * every table the inputs had records in. */
static void print_text(const pn_merge_stats *s, int failed)
{
	pn_merge_counts t = total_of(s);
	printf("merge: %llu inputs%s: %llu records added, %llu already equal, %llu settled by "
	       "rule, %llu conflicts (",
	       (unsigned long long)s->inputs, failed ? " (some unreadable)" : "",
	       (unsigned long long)t.added, (unsigned long long)t.equal,
	       (unsigned long long)t.resolved, (unsigned long long)t.conflicts);
	int first = 1;
	for (int i = 0; i < PN_T_COUNT; i++) {
		const pn_merge_counts *c = &s->table[i];
		if (!c->added && !c->equal && !c->resolved && !c->conflicts)
			continue;
		printf("%s%s %llu/%llu/%llu/%llu", first ? "" : ", ", pn_table_name(i),
		       (unsigned long long)c->added, (unsigned long long)c->equal,
		       (unsigned long long)c->resolved, (unsigned long long)c->conflicts);
		first = 0;
	}
	printf("%sadded/equal/settled/conflicts), %llu sources recounted\n",
	       first ? "" : "; ", (unsigned long long)s->recounted);
}

static int run(pn_ctx *ctx)
{
	pn_merge_stats s = {0};
	int failed = 0;
	char err[PN_ERRLEN];
	for (int i = 0; i < ctx->argc; i++) {
		if (pn_store_merge(ctx->store, ctx->argv[i], &s, err)) {
			pn_error_line("%s", err);
			failed++;
		}
	}
	/* blocks each input held once, the merged corpus twice: kept now, as
	 * one build of every input's sources would have kept them */
	pn_stage_stats kept = {0}, hashed = {0};
	if (pn_blocks_keep(ctx->store, ctx->threads, &kept, &hashed, err)) {
		pn_error_line("%s", err);
		return 1;
	}
	if (ctx->json)
		print_json(&s, failed, &kept);
	else
		print_text(&s, failed);
	if (!ctx->json && kept.candidates)
		printf("merge: %llu corpus blocks the inputs held once each kept as typical cuts "
		       "(%llu new subgraphs)\n",
		       (unsigned long long)kept.candidates, (unsigned long long)hashed.new_subgraphs);
	if (failed)
		return 1;
	return strict && pn_merge_total_conflicts(&s) ? 1 : 0;
}

const pn_cmd_spec pn_cmd_merge = {
	.options = options,
	.args = "IN...",
	.min_args = 1,
	.max_args = -1,
	.summary = "merge shard stores into the store",
	.description = "merge the stores IN (opened read-only) into `--db`: in any order or "
		       "grouping the result is the same, and that of one machine building the "
		       "same sources; a key held with other bytes is a conflict, reported on "
		       "stderr and counted, the least bytes kept (`--strict`: exit 1)",
	.details = "Merges each store IN, opened read-only, into the store of --db, table by\n"
		   "table: models found in several places keep the least (source, path),\n"
		   "candidates keep the subgraph hash dedup gave them, occurrences and\n"
		   "structures are the union, sources are recounted from their places;\n"
		   "any other key held with other bytes (two calibrations, a model record)\n"
		   "is a conflict: one line on stderr, counted, and the least bytes kept, so\n"
		   "the order of the inputs never matters.  Merging again adds nothing.\n"
		   "A corpus block two inputs each held once is then kept as a typical cut\n"
		   "(dedup/blocks.h), as one build would have (the models read again).\n"
		   "An IN of another schema version is refused.  Exit status: 0 when\n"
		   "merged, 1 when an IN could not be read (the others are merged) or with\n"
		   "--strict after a conflict.\n",
	.run = run,
};
