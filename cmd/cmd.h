/*
 * cmd.h - the subcommands of `passnet`, one file each in cmd/ (dispatched
 * from passnet.c, the way git.c dispatches to builtin/).
 *
 * Global options are taken out of argv by passnet.c before a command sees
 * it: --db DIR, --json, -j/--threads N, -q.  A command returns the process
 * exit status: 0 success, 1 failure (one-line reason printed), 2 usage.
 */
#ifndef PN_CMD_H
#define PN_CMD_H

#include <stddef.h>
#include <stdint.h>

typedef struct pn_cli {
	const char *db;     /* store directory (default ./passnet.lmdb) */
	int json;           /* JSON Lines output */
	int threads;        /* 0 = OpenMP default */
	int quiet;
} pn_cli;

#define PN_CMDS(X)                                                                    \
	X(build, "extract, partition and dedup in one run")                         \
	X(fetch, "fetch a manifest's npm, deb and url sources into the cache")      \
	X(extract, "ingest models from files, directories, archives or a manifest")  \
	X(ls, "list models in the store")                                            \
	X(show, "show one model")                                                    \
	X(stats, "summarise the store")                                              \
	X(doctor, "check the store's invariants")                                    \
	X(partition, "cut stored models into candidate subgraphs")                  \
	X(dedup, "hash candidates canonically and store each subgraph once")        \
	X(exec, "profile every subgraph not yet measured and flag the slow ones")   \
	X(hash, "canonical hash of a model file's graph or of its subgraphs")       \
	X(export_onnx, "write a stored subgraph as a standalone ONNX model")        \
	X(export, "write a curated benchmark task set")                             \
	X(run, "run a model on the reference executor")                              \
	X(calibrate, "measure this machine's peak FLOP/s, bandwidth and per-node overhead") \
	X(report, "write an HTML report of the profiled subgraphs")                  \
	X(check, "check a candidate against an exported task: correctness and speedup") \
	X(score, "compute ES_t scores from check results")                          \
	X(time, "time ONNX models or backend-test folders on the executor")         \
	X(conformance, "run ONNX backend-test folders and compare outputs")

#define PN_DECLARE_CMD(name, summary) int cmd_##name(int argc, char **argv, const pn_cli *cli);
PN_CMDS(PN_DECLARE_CMD)

struct pn_stage_stats;
struct pn_source_spec;
struct pn_fetched;
/* Fetches (offline: only looks up) every npm, deb and url source of
 * src[0..n) in the cache, fills f[i] and points src[i].fetched at it.
 * listing: one line per source on stdout (`passnet fetch`); otherwise what
 * was fetched is noted on stderr and failures are left to extract, which
 * reports and records them.  Returns how many failed or are missing. */
int  pn_fetch_remote(struct pn_source_spec *src, int n, int offline, int listing,
		     struct pn_fetched *f);
/* Stage runners shared by their commands and `passnet build`. */
int  pn_run_extract(int argc, char **argv, const pn_cli *cli, const char *usage, char **strategy);
int  pn_run_partition(const pn_cli *cli, char *strategies);
int  pn_run_dedup(const pn_cli *cli);
struct pn_profile_opts;
int  pn_run_exec(const pn_cli *cli, const struct pn_profile_opts *o);
void pn_print_stage(const char *stage, const struct pn_stage_stats *s, int json);

struct pn_dimbind;
/* Adds "NAME=V" (a --dim argument) to a binding; -1 if malformed. */
int pn_parse_dim(struct pn_dimbind *b, const char *arg);
void pn_dimbind_free(struct pn_dimbind *b);


/* True if argv holds -h or --help; prints usage when so. */
int pn_wants_help(int argc, char **argv, const char *usage);
/* Parses "--name VALUE" / "--name=VALUE" at argv[*i]; advances *i. */
const char *pn_opt_value(int argc, char **argv, int *i, const char *name);

#endif
