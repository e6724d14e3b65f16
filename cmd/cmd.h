/*
 * cmd.h - the subcommands of `passnet`, one file each in cmd/ (dispatched
 * from passnet.c, the way git.c dispatches to builtin/).
 *
 * A command is described by one pn_cmd_spec: its option table
 * (cmd/parse_options.h), its arguments, its texts and its functions.
 * passnet.c lists the commands with the set-up each needs (PN_NEEDS_STORE
 * and friends below): it takes the global options (--db DIR, --json,
 * -j/--threads N, -q) out of the command line, parses the command's options
 * from its table, runs its check, opens the store as asked, and only then
 * calls run() with everything in a pn_ctx; it closes the store afterwards.
 * A command returns the process exit status: 0 success, 1 failure
 * (one-line reason printed), 2 usage.
 */
#ifndef PN_CMD_H
#define PN_CMD_H

#include <stddef.h>
#include <stdint.h>

#include "cmd/parse_options.h"
#include "store/store.h"

/* What passnet.c sets up before a command runs (pn_cmd_entry.flags). */
#define PN_NEEDS_STORE  0x1u   /* open --db read-only, with a read snapshot in ctx->txn */
#define PN_WRITES_STORE 0x2u   /* open --db writable (created when missing) */
#define PN_USES_THREADS 0x4u   /* -j/--threads N reaches ctx->threads (else it stays 0) */
#define PN_OPENS_STORE  0x8u   /* reads --db itself, only on some paths (run, calibrate) */

typedef struct pn_ctx {
	const char *db;     /* store directory (default ./passnet.lmdb) */
	int json;           /* JSON Lines output */
	int threads;        /* 0 = OpenMP default (or not a threaded command) */
	int quiet;          /* no progress or summaries on stderr */
	pn_store *store;    /* PN_NEEDS_STORE / PN_WRITES_STORE: the open store */
	pn_rtxn *txn;       /* PN_NEEDS_STORE: a read snapshot */
	int argc;           /* the arguments left after the options */
	char **argv;
	const pn_usage *usage;   /* for pn_usage_error */
} pn_ctx;


typedef struct pn_cmd_spec {
	const pn_option *options;
	const char *args;          /* the arguments in the synopsis: "[PATH...]" */
	int min_args, max_args;    /* how many there may be; max -1: no limit */
	const char *summary;       /* one line, in `passnet --help` */
	const char *description;   /* the README's command table (one paragraph, Markdown) */
	const char *details;       /* --help, between the usage line and the options */
	/* Validates the options before any store is opened; returns an exit
	 * status (0: go on).  NULL: nothing to check. */
	int (*check)(pn_ctx *ctx);
	int (*run)(pn_ctx *ctx);
} pn_cmd_spec;

/* The commands, with the set-up passnet.c does for each: X(identifier,
 * name typed, flags).  passnet.c's table, `passnet --help` and `passnet
 * help --markdown` (README's command table) come from this list. */
#define PN_CMDS(X)                                                                \
	X(build, "build", PN_WRITES_STORE | PN_USES_THREADS)                        \
	X(fetch, "fetch", 0)                                                        \
	X(extract, "extract", PN_WRITES_STORE | PN_USES_THREADS)                    \
	X(ls, "ls", PN_NEEDS_STORE)                                                 \
	X(show, "show", PN_NEEDS_STORE)                                             \
	X(stats, "stats", PN_NEEDS_STORE)                                           \
	X(doctor, "doctor", PN_NEEDS_STORE)                                         \
	X(hash, "hash", 0)                                                          \
	X(export_onnx, "export-onnx", PN_NEEDS_STORE)                               \
	X(partition, "partition", PN_WRITES_STORE | PN_USES_THREADS)                \
	X(dedup, "dedup", PN_WRITES_STORE | PN_USES_THREADS)                        \
	X(exec, "exec", PN_WRITES_STORE | PN_USES_THREADS)                          \
	X(baseline, "baseline", PN_WRITES_STORE)                                    \
	X(merge, "merge", PN_WRITES_STORE | PN_USES_THREADS)                        \
	X(calibrate, "calibrate", PN_OPENS_STORE | PN_USES_THREADS)                 \
	X(run, "run", PN_OPENS_STORE | PN_USES_THREADS)                             \
	X(time, "time", PN_USES_THREADS)                                            \
	X(report, "report", PN_NEEDS_STORE)                                         \
	X(conformance, "conformance", PN_USES_THREADS)                              \
	X(export, "export", PN_NEEDS_STORE | PN_USES_THREADS)                       \
	X(check, "check", PN_USES_THREADS)                                          \
	X(score, "score", 0)

#define PN_DECLARE_CMD(id, name, flags) extern const pn_cmd_spec pn_cmd_##id;
PN_CMDS(PN_DECLARE_CMD)

struct pn_stage_stats;
struct pn_dimbind;
struct pn_profile_opts;
/* Each stage as its command and `passnet build` run it on ctx->store: the
 * call into the stage (extract/run.c, partition/stage.c, dedup/stage.c,
 * exec/profile_stage.c, exec/baseline.c), then its summary printed. */
int  pn_call_extract(pn_ctx *ctx);
struct pn_shard;
/* shard: NULL for all (build's partition and dedup take all its store holds) */
int  pn_call_partition(pn_ctx *ctx, const char *strategies, const struct pn_shard *shard);
int  pn_call_dedup(pn_ctx *ctx, const struct pn_shard *shard);
/* partition and dedup as one streamed pass (dedup/stream.h), then dedup
 * over the candidates table if a partition run left it marked; prints the
 * two stages' summaries (cmd/dedup.c) */
int  pn_call_cut_and_dedup(pn_ctx *ctx, const char *strategies);
int  pn_call_exec(pn_ctx *ctx, const struct pn_profile_opts *o);
struct pn_baseline_opts;
/* The ONNX Runtime baseline stage and its summary (who: the command, for
 * the error line); `passnet baseline` and `exec --baseline ort`. */
int  pn_call_baseline(pn_ctx *ctx, const struct pn_baseline_opts *o, const char *who);
void pn_print_stage(const char *stage, const struct pn_stage_stats *s, int json);
/* extract's options (build includes them) and their check. */
extern const pn_option pn_extract_options[];
int  pn_check_extract(pn_ctx *ctx);

/* Adds "NAME=V" (a --dim argument) to a binding; -1 if malformed. */
int pn_parse_dim(struct pn_dimbind *b, const char *arg);
void pn_dimbind_free(struct pn_dimbind *b);
/* --dim NAME=V as a PN_OPT_CALLBACK (dest: a pn_dimbind). */
int pn_opt_dim(void *dest, const char *value, char *err);
/* --shard K/N (common/shard.h) as a PN_OPT_CALLBACK; every stage command
 * parses it into pn_cmd_shard (one command per process), with its own help
 * saying which key it shards by. */
extern struct pn_shard pn_cmd_shard;
int pn_opt_shard(void *dest, const char *value, char *err);

#endif
