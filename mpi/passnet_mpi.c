/*
 * passnet_mpi.c - `passnet-mpi`: one passnet job over the ranks of an MPI
 * job (OpenMPI's mpirun, or srun under Slurm).
 *
 *   mpirun -n N passnet-mpi [--db DIR] [--work WDIR] [-j T] [--batch B]
 *          build|exec|all [ARGS...] [-- EXEC-ARGS...]
 *
 * MPI only coordinates; the work is done by bin/passnet, run by each rank
 * as a child process on a store of its own (WDIR/rank-R, default DIR.mpi/),
 * and rank 0 merges those stores into DIR with `passnet merge`.  So the
 * ranks exchange no records over MPI: WDIR must be a folder every rank can
 * write and rank 0 can read (shared storage across nodes).  Because every
 * shard store is kept until it has been merged, and every passnet stage
 * resumes, a killed job rerun with the same command ends in the same state.
 *
 * build: rank R runs `passnet build --shard R/N ARGS` (the model files whose
 *   place falls in shard R, common/shard.h) into WDIR/rank-R, which starts
 *   as a copy of DIR when DIR exists (so models already stored are not
 *   decoded again); then rank 0 merges every rank's store into DIR.
 * exec: rank 0 first merges what a killed run left in WDIR; the ranges
 *   phase runs over every rank (rank R the models of shard R/N, `exec
 *   --ranges-only --shard`, on a copy of DIR), merged into DIR by rank 0,
 *   which joins them; rank 0 records the calibration on DIR (`exec --only
 *   EMPTY`) and plans (`exec --plan`); each other rank copies DIR into its store, then
 *   asks rank 0 for batches of B subgraph hashes and profiles each batch
 *   (`exec --only BATCH`) until none is left, so a slow rank takes fewer
 *   batches and does not hold the job back; rank 0 merges the ranks' stores
 *   into DIR.  With one rank, rank 0 profiles the batches itself.
 *   --budget S stops handing out batches after S seconds; --limit L plans L
 *   subgraphs; the other EXEC-ARGS reach every exec.
 * all: build (ARGS), then exec (the EXEC-ARGS after `--`).
 *
 * Waiting ranks poll with a short sleep instead of blocking in MPI (OpenMPI
 * spins in a blocking call, which would take a core from the ranks that
 * work when ranks share a machine).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define TAG_ASK 1     /* worker -> rank 0: a batch, please */
#define TAG_BATCH 2   /* rank 0 -> worker: B hashes (33 bytes each), none = done */
#define HASH_TEXT 33  /* 32 hex digits and a newline */
#define POLL_NS 2000000L
/* rank stores one merge takes (argv_buf holds 512 words) */
#define MAX_RANK_STORES 500

typedef struct job {
	int rank, size;
	const char *db;
	char work[PATH_MAX];
	const char *threads;     /* -j, passed on, or NULL */
	int batch;
	char passnet[PATH_MAX];  /* the passnet binary beside this one */
	char **args;             /* build's (or exec's) arguments */
	int nargs;
	char **exec_args;        /* all: the ones after "--" */
	int n_exec_args;
} job;

static void die(const char *fmt, const char *a)
{
	fprintf(stderr, "passnet-mpi: ");
	fprintf(stderr, fmt, a);
	fprintf(stderr, "\n");
	MPI_Abort(MPI_COMM_WORLD, 2);
	exit(2);
}

static void usage(void)
{
	fprintf(stderr, "usage: mpirun -n N passnet-mpi [--db DIR] [--work WDIR] [-j T] "
			"[--batch B] build|exec|all [ARGS...] [-- EXEC-ARGS...]\n");
}

/* --- waiting without spinning ------------------------------------------------------ */

static void nap(void)
{
	struct timespec ts = {0, POLL_NS};
	nanosleep(&ts, NULL);
}

static void wait_lazily(MPI_Request *rq)
{
	int done = 0;
	for (MPI_Test(rq, &done, MPI_STATUS_IGNORE); !done; MPI_Test(rq, &done, MPI_STATUS_IGNORE))
		nap();
}

/* Every rank's status in, the worst (largest) out to every rank: a barrier
 * that also says whether some rank failed. */
static int agree(int status)
{
	int worst = 0;
	MPI_Request rq;
	MPI_Iallreduce(&status, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD, &rq);
	wait_lazily(&rq);
	return worst;
}

/* --- child processes ------------------------------------------------------------------ */

/* Runs argv (argv[0] the program path), stdout to out_path when given;
 * returns its exit status, or 128 + the signal that ended it.  The child
 * dies with its rank (PR_SET_PDEATHSIG): a rank killed mid-run leaves no
 * passnet writing on into the store the rerun merges. */
static int run(char **argv, const char *out_path)
{
	fflush(NULL);
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid < 0) {
		fprintf(stderr, "passnet-mpi: fork: %s\n", strerror(errno));
		return 127;
	}
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(127);   /* the rank died before the line above */
		if (out_path) {
			int fd = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
			if (fd < 0 || dup2(fd, 1) < 0)
				_exit(127);
			close(fd);
		}
		execv(argv[0], argv);
		fprintf(stderr, "passnet-mpi: %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return 127;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* argv for `passnet --db DB [-j T] WORDS... EXTRA...` (NULL-terminated). */
typedef struct argv_buf {
	char *v[512];
	int n;
} argv_buf;

static void push(argv_buf *a, const char *s)
{
	if (a->n >= (int)(sizeof a->v / sizeof *a->v) - 1)
		die("%s", "too many arguments");
	a->v[a->n++] = (char *)s;
	a->v[a->n] = NULL;
}

static void start(argv_buf *a, const job *j, const char *db)
{
	a->n = 0;
	push(a, j->passnet);
	push(a, "--db");
	push(a, db);
	if (j->threads) {
		push(a, "-j");
		push(a, j->threads);
	}
}

static int is_dir(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static int store_exists(const char *dir)
{
	char p[PATH_MAX];
	snprintf(p, sizeof p, "%s/data.mdb", dir);
	return access(p, R_OK) == 0;
}

static void rank_store(const job *j, int r, char *out, size_t cap)
{
	snprintf(out, cap, "%s/rank-%d", j->work, r);
}

/* `passnet --db to merge from` */
static int copy_store(const job *j, const char *from, const char *to)
{
	argv_buf a;
	start(&a, j, to);
	push(&a, "-q");
	push(&a, "merge");
	push(&a, from);
	return run(a.v, NULL);
}

static int remove_tree(const char *dir)
{
	char *argv[] = {"/bin/rm", "-rf", (char *)dir, NULL};
	return run(argv, NULL);
}

/* Rank 0: merges every rank-* store left in the work folder into DB and
 * removes them once merged.  0 when there was nothing or all went in. */
static int merge_leftovers(const job *j)
{
	DIR *d = opendir(j->work);
	if (!d)
		return 0;
	argv_buf a;
	start(&a, j, j->db);
	push(&a, "merge");
	int first = a.n;
	static char names[MAX_RANK_STORES][PATH_MAX];
	int n = 0;
	for (struct dirent *e; (e = readdir(d));) {
		if (strncmp(e->d_name, "rank-", 5))
			continue;
		if (n == MAX_RANK_STORES) {   /* never merge some and drop the rest */
			closedir(d);
			fprintf(stderr, "passnet-mpi: more than %d rank stores in %s\n",
				MAX_RANK_STORES, j->work);
			return 1;
		}
		snprintf(names[n], PATH_MAX, "%s/%s", j->work, e->d_name);
		if (store_exists(names[n]))
			push(&a, names[n++]);
	}
	closedir(d);
	if (!n)
		return 0;
	/* directory order is not sorted; merge's result does not depend on it */
	int rc = run(a.v, NULL);
	for (int i = first; !rc && i < a.n; i++)
		remove_tree(a.v[i]);
	return rc;
}

/* --- build ------------------------------------------------------------------------------ */

static int build(const job *j)
{
	char mine[PATH_MAX];
	rank_store(j, j->rank, mine, sizeof mine);
	int rc = 0;
	/* a store of this rank from a killed run is resumed as it is */
	if (!store_exists(mine) && store_exists(j->db))
		rc = copy_store(j, j->db, mine);
	if (!rc) {
		char shard[64];
		snprintf(shard, sizeof shard, "%d/%d", j->rank, j->size);
		argv_buf a;
		start(&a, j, mine);
		push(&a, "build");
		push(&a, "--shard");
		push(&a, shard);
		for (int i = 0; i < j->nargs; i++)
			push(&a, j->args[i]);
		rc = run(a.v, NULL);
		if (rc)
			fprintf(stderr, "passnet-mpi: rank %d: build --shard %s failed (%d)\n", j->rank,
				shard, rc);
	}
	if (agree(rc ? 1 : 0))
		return 1;
	if (j->rank == 0) {
		rc = merge_leftovers(j);
		if (rc)
			fprintf(stderr, "passnet-mpi: merging the ranks' stores into %s failed\n", j->db);
	}
	return agree(rc ? 1 : 0);
}

/* --- exec ----------------------------------------------------------------------------- */

typedef struct exec_plan {
	char *text;      /* the plan: HASH_TEXT bytes per subgraph */
	long n, next;
	double budget_s;
	char limit[32];  /* --limit's value, for the plan */
	argv_buf passed; /* the other exec arguments */
} exec_plan;

static void split_exec_args(char **v, int n, exec_plan *p)
{
	for (int i = 0; i < n; i++) {
		const char *s = v[i];
		if (!strcmp(s, "--budget") && i + 1 < n)
			p->budget_s = atof(v[++i]);
		else if (!strncmp(s, "--budget=", 9))
			p->budget_s = atof(s + 9);
		else if (!strcmp(s, "--limit") && i + 1 < n)
			snprintf(p->limit, sizeof p->limit, "%s", v[++i]);
		else if (!strncmp(s, "--limit=", 8))
			snprintf(p->limit, sizeof p->limit, "%s", s + 8);
		else
			push(&p->passed, s);
	}
}

static void push_passed(argv_buf *a, const exec_plan *p)
{
	for (int i = 0; i < p->passed.n; i++)
		push(a, p->passed.v[i]);
}

static char *read_file(const char *path, long *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	*len = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *b = malloc((size_t)*len + 1);
	if (b && fread(b, 1, (size_t)*len, f) != (size_t)*len) {
		free(b);
		b = NULL;
	}
	fclose(f);
	return b;
}

/* Rank 0, before any batch: leftovers in, calibration and ranges, the plan. */
static int prepare_exec(const job *j, exec_plan *p)
{
	if (merge_leftovers(j))
		return 1;
	char empty[PATH_MAX], plan[PATH_MAX];
	snprintf(empty, sizeof empty, "%s/empty.txt", j->work);
	snprintf(plan, sizeof plan, "%s/plan.txt", j->work);
	FILE *f = fopen(empty, "w");
	if (!f)
		die("cannot write in the work folder %s", j->work);
	fclose(f);
	argv_buf a;
	start(&a, j, j->db);
	push(&a, "exec");
	push_passed(&a, p);   /* first: the last --only given wins */
	push(&a, "--only");
	push(&a, empty);
	if (run(a.v, NULL))
		return 1;
	start(&a, j, j->db);
	push(&a, "exec");
	push(&a, "--plan");
	if (p->limit[0]) {
		push(&a, "--limit");
		push(&a, p->limit);
	}
	push_passed(&a, p);
	if (run(a.v, plan))
		return 1;
	long len = 0;
	p->text = read_file(plan, &len);
	if (!p->text)
		return 1;
	p->n = len / HASH_TEXT;
	fprintf(stderr, "passnet-mpi: exec: %ld subgraphs to profile, in batches of %d over %d "
			"rank%s\n", p->n, j->batch, j->size > 1 ? j->size - 1 : 1, j->size > 2 ? "s" : "");
	return 0;
}

/* The next batch's bytes (0 when none is left or the budget is spent). */
static long next_batch(const job *j, exec_plan *p, double t0, const char **out)
{
	if (p->budget_s > 0 && MPI_Wtime() - t0 > p->budget_s)
		p->next = p->n;
	long k = p->n - p->next < j->batch ? p->n - p->next : j->batch;
	*out = p->text + p->next * HASH_TEXT;
	p->next += k;
	return k * HASH_TEXT;
}

static int profile_batch(const job *j, const exec_plan *p, const char *db, const char *hashes,
			 long len)
{
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/batch-%d.txt", j->work, j->rank);
	FILE *f = fopen(path, "wb");
	if (!f || fwrite(hashes, 1, (size_t)len, f) != (size_t)len) {
		if (f)
			fclose(f);
		return 1;
	}
	fclose(f);
	argv_buf a;
	start(&a, j, db);
	push(&a, "-q");
	push(&a, "exec");
	push_passed(&a, p);   /* first: the last --only given wins */
	push(&a, "--only");
	push(&a, path);
	return run(a.v, NULL);
}

/* Rank 0 with other ranks: answers each request with the next batch until
 * every worker has been told there is none left. */
static void serve_batches(const job *j, exec_plan *p, double t0)
{
	int working = j->size - 1;
	while (working > 0) {
		int flag = 0;
		MPI_Status st;
		MPI_Iprobe(MPI_ANY_SOURCE, TAG_ASK, MPI_COMM_WORLD, &flag, &st);
		if (!flag) {
			nap();
			continue;
		}
		int dummy;
		MPI_Recv(&dummy, 1, MPI_INT, st.MPI_SOURCE, TAG_ASK, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		const char *b;
		long len = next_batch(j, p, t0, &b);
		MPI_Send(b, (int)len, MPI_CHAR, st.MPI_SOURCE, TAG_BATCH, MPI_COMM_WORLD);
		working -= len == 0;
	}
}

static int work_batches(const job *j, const exec_plan *p, const char *db)
{
	char *buf = malloc((size_t)j->batch * HASH_TEXT);
	int rc = 0;
	for (;;) {
		int ask = j->rank;
		MPI_Request rq;
		MPI_Isend(&ask, 1, MPI_INT, 0, TAG_ASK, MPI_COMM_WORLD, &rq);
		wait_lazily(&rq);
		MPI_Status st;
		int flag = 0;
		while (MPI_Iprobe(0, TAG_BATCH, MPI_COMM_WORLD, &flag, &st), !flag)
			nap();
		int len;
		MPI_Get_count(&st, MPI_CHAR, &len);
		MPI_Recv(buf, j->batch * HASH_TEXT, MPI_CHAR, 0, TAG_BATCH, MPI_COMM_WORLD,
			 MPI_STATUS_IGNORE);
		if (!len)
			break;
		/* after a failure the rank still drains its batches, so rank 0
		 * ends; what it measured is kept and merged */
		if (!rc && profile_batch(j, p, db, buf, len))
			rc = 1;
	}
	free(buf);
	return rc;
}

/* The ranges phase over every rank: rank R runs the models of shard R/N
 * (`exec --ranges-only --shard`) on a copy of DB, and rank 0 merges the
 * copies, which joins the ranges into those of one run over all models
 * (store/merge.h).  First rank 0 merges in what a killed run left. */
static int share_ranges(const job *j, const exec_plan *p)
{
	int rc = j->rank == 0 ? merge_leftovers(j) : 0;
	if (agree(rc ? 1 : 0))
		return 1;
	char mine[PATH_MAX], shard[64];
	rank_store(j, j->rank, mine, sizeof mine);
	snprintf(shard, sizeof shard, "%d/%d", j->rank, j->size);
	rc = copy_store(j, j->db, mine);
	if (!rc) {
		argv_buf a;
		start(&a, j, mine);
		push(&a, "-q");
		push(&a, "exec");
		push_passed(&a, p);
		push(&a, "--ranges-only");
		push(&a, "--shard");
		push(&a, shard);
		rc = run(a.v, "/dev/null");
	}
	if (agree(rc ? 1 : 0))
		return 1;
	rc = j->rank == 0 ? merge_leftovers(j) : 0;
	return agree(rc ? 1 : 0);
}

static int exec_stage(const job *j, char **args, int nargs)
{
	exec_plan p = {0};
	split_exec_args(args, nargs, &p);
	double t0 = MPI_Wtime();
	if (j->size > 1 && share_ranges(j, &p))
		return 1;
	int rc = j->rank == 0 ? prepare_exec(j, &p) : 0;
	if (agree(rc))
		return 1;
	char mine[PATH_MAX];
	rank_store(j, j->rank, mine, sizeof mine);
	if (j->size == 1) {
		const char *b;
		for (long len; !rc && (len = next_batch(j, &p, t0, &b)) > 0;)
			rc = profile_batch(j, &p, j->db, b, len);
	} else if (j->rank == 0) {
		serve_batches(j, &p, t0);
	} else {
		rc = copy_store(j, j->db, mine);
		/* a rank whose copy failed still answers rank 0, with nothing done */
		rc |= work_batches(j, &p, rc ? NULL : mine);
	}
	free(p.text);
	int failed = agree(rc ? 1 : 0);
	int merged = 0;
	if (j->rank == 0 && j->size > 1)
		merged = merge_leftovers(j);
	return agree(failed || merged ? 1 : 0);
}

/* Rank 0 after a job that went through: the work folder held only shard
 * stores (merged and removed by now) and the plan and batch lists. */
static void tidy_work(const job *j)
{
	DIR *d = opendir(j->work);
	if (!d)
		return;
	for (struct dirent *e; (e = readdir(d));) {
		if (strstr(e->d_name, ".txt")) {
			char p[PATH_MAX];
			snprintf(p, sizeof p, "%s/%s", j->work, e->d_name);
			unlink(p);
		}
	}
	closedir(d);
	rmdir(j->work);   /* fails, harmlessly, when something else is there */
}

/* --- the command line ----------------------------------------------------------------- */

static void find_passnet(job *j)
{
	const char *env = getenv("PASSNET_BIN");
	if (env) {
		snprintf(j->passnet, sizeof j->passnet, "%s", env);
		return;
	}
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	if (n <= 0)
		die("%s", "cannot find this program's folder (/proc/self/exe)");
	self[n] = 0;
	char *slash = strrchr(self, '/');
	*slash = 0;
	snprintf(j->passnet, sizeof j->passnet, "%s/passnet", self);
	if (access(j->passnet, X_OK))
		die("no passnet beside passnet-mpi (%s); set PASSNET_BIN", j->passnet);
}

static int parse(job *j, int argc, char **argv, const char **what)
{
	j->db = "passnet.lmdb";
	j->batch = 16;
	const char *work = NULL;
	int i = 1;
	for (; i < argc && argv[i][0] == '-'; i++) {
		const char *o = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(o, "--db") && v)
			j->db = v, i++;
		else if (!strcmp(o, "--work") && v)
			work = v, i++;
		else if ((!strcmp(o, "-j") || !strcmp(o, "--threads")) && v)
			j->threads = v, i++;
		else if (!strcmp(o, "--batch") && v && atoi(v) > 0)
			j->batch = atoi(v), i++;
		else
			return -1;
	}
	if (i >= argc)
		return -1;
	*what = argv[i++];
	if (strcmp(*what, "build") && strcmp(*what, "exec") && strcmp(*what, "all"))
		return -1;
	j->args = argv + i;
	j->nargs = argc - i;
	for (int k = 0; k < j->nargs; k++)
		if (!strcmp(j->args[k], "--")) {
			j->exec_args = j->args + k + 1;
			j->n_exec_args = j->nargs - k - 1;
			j->nargs = k;
			break;
		}
	if (work)
		snprintf(j->work, sizeof j->work, "%s", work);
	else
		snprintf(j->work, sizeof j->work, "%s.mpi", j->db);
	return 0;
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	job j = {0};
	MPI_Comm_rank(MPI_COMM_WORLD, &j.rank);
	MPI_Comm_size(MPI_COMM_WORLD, &j.size);
	const char *what = NULL;
	if (parse(&j, argc, argv, &what)) {
		if (j.rank == 0)
			usage();
		MPI_Finalize();
		return 2;
	}
	find_passnet(&j);
	if (j.rank == 0 && !is_dir(j.work) && mkdir(j.work, 0755) && errno != EEXIST)
		die("cannot make the work folder %s", j.work);
	if (agree(0))
		return 1;
	double t0 = MPI_Wtime();
	int rc = 0;
	if (strcmp(what, "exec"))
		rc = build(&j);
	if (!rc && !strcmp(what, "exec"))
		rc = exec_stage(&j, j.args, j.nargs);
	if (!rc && !strcmp(what, "all"))
		rc = exec_stage(&j, j.exec_args, j.n_exec_args);
	if (j.rank == 0 && !rc)
		tidy_work(&j);
	if (j.rank == 0)
		fprintf(stderr, "passnet-mpi: %s over %d ranks %s in %.1f s (store %s)\n", what, j.size,
			rc ? "failed" : "done", MPI_Wtime() - t0, j.db);
	MPI_Finalize();
	return rc;
}
