/*
 * mkprofiles - writes synthetic Profile records for a store's subgraphs, so
 * the report (and anything else reading profiles) can be tested before, and
 * independently of, the real profiler.
 *
 *   mkprofiles [--ort] DB
 *
 * Every figure is derived from the subgraph's hash and its stored cost, so
 * the same store always gets the same profiles.  About 1 subgraph in 8 is
 * left unprofiled, 1 in 25 of the rest fails, 1 in 12 is unstable; the
 * time / bound ratio spreads log-uniformly from 0.5 to 1000, and the flags
 * follow from the figures the way docs/executor.md describes them.  With
 * --ort, every profile not failed also gets a synthetic ONNX Runtime
 * baseline (version "synthetic"): 1 in 6 refused, the rest timed, and 1 in
 * 3 of those slower at level ALL by 1.5x and flagged compiler-regression,
 * so that what reads baselines (the compiler-regression share) is tested
 * on figures known in advance.  Prints "profiles N failed N unstable N slow
 * N" and with --ort " ort N regressions N".
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "passnet.pb-c.h"
#include "store/store.h"

typedef struct job {
	pn_writer *w;
	int ort;               /* --ort: synthetic baselines too */
	long profiles, failed, unstable, slow, ort_timed, ort_regressions;
	char err[PN_ERRLEN];
} job;

/* A uniform number in [0, 1) from two bytes of the hash. */
static double unit(const uint8_t *h, int i)
{
	return (h[i] * 256 + h[i + 1]) / 65536.0;
}

static void add_flag(Passnet__Profile *p, char **flags, const char *f)
{
	flags[p->n_flags++] = (char *)f;
}

/* A synthetic ONNX Runtime baseline of a measured profile, into b. */
static void add_ort(job *j, const uint8_t *h, Passnet__Profile *p, char **flags,
		    Passnet__OrtBaseline *b)
{
	p->ort = b;
	b->ort_version = "synthetic";
	if (h[10] % 6 == 0) {
		b->status = "refused";
		b->message = "synthetic refusal";
		return;
	}
	b->status = "ok";
	b->has_median_all_us = b->has_median_disabled_us = b->has_ratio = 1;
	b->has_agree = b->has_agree_disabled = 1;
	b->agree = b->agree_disabled = 1;
	b->median_disabled_us = p->median_us * 0.8;
	b->median_all_us = b->median_disabled_us * (h[11] % 3 == 0 ? 1.5 : 0.9);
	b->ratio = b->median_all_us / p->median_us;
	j->ort_timed++;
	if (h[11] % 3 == 0) {
		add_flag(p, flags, "compiler-regression");
		j->ort_regressions++;
	}
}

static int put_profile(job *j, const uint8_t *h, const Passnet__Subgraph *sg)
{
	static char *thresholds[] = {"slow: time/bound_fused > 20",
				     "fusible: bytes_unfused/bytes_fused > 1.5",
				     "overhead-bound: overhead_us > time/2",
				     "parallel-slowdown: time > time_1thread",
				     "unstable: iqr/median > 0.1 after 2 repeats"};
	Passnet__Profile p = PASSNET__PROFILE__INIT;
	Passnet__OrtBaseline ort = PASSNET__ORT_BASELINE__INIT;
	char *flags[8];
	double times[5];
	p.has_version = 1;
	p.version = PN_SCHEMA_VERSION;
	p.executor_build = "synthetic <mkprofiles>";
	p.has_threads = p.has_warmups = p.has_trials = p.has_seed = p.has_nodes = 1;
	p.threads = 2;
	p.warmups = 2;
	p.seed = 1;
	p.nodes = sg->nodes;
	p.flags = flags;
	p.thresholds = thresholds;
	p.n_thresholds = sizeof thresholds / sizeof thresholds[0];
	if (h[1] % 25 == 0) {
		p.status = "failed";
		p.reason = h[2] % 2 ? "kernel for 'Foo' missing" : "out of memory (> 1 GiB) at node 3";
		add_flag(&p, flags, "failed");
		j->failed++;
	} else {
		/* 50 GFLOP/s and 10 GB/s; a store whose subgraphs carry no cost
		 * yet gets bounds spread over four decades instead. */
		double flops = sg->flops, bytes = sg->bytes_fused;
		double bound = fmax(flops / 5e4, bytes / 1e4);
		if (!(bound > 0))
			bound = 0.05 * (sg->nodes ? sg->nodes : 1) * pow(10, unit(h, 7) * 3);
		double ratio = pow(10, unit(h, 3) * 3.3 - 0.3);
		double t = bound * ratio;
		p.trials = 5;
		p.times_us = times;
		p.n_times_us = 5;
		for (int i = 0; i < 5; i++)
			times[i] = t * (0.98 + 0.01 * i);
		p.has_median_us = p.has_iqr_us = p.has_bound_fused_us = p.has_bound_unfused_us = 1;
		p.has_median_1thread_us = p.has_overhead_us = 1;
		p.has_flops = p.has_bytes_fused = p.has_bytes_unfused = 1;
		p.median_us = t;
		p.iqr_us = t * 0.02;
		p.bound_fused_us = bound;
		p.bound_unfused_us = fmax(bound, sg->bytes_unfused / 1e4);
		p.median_1thread_us = h[5] % 9 == 0 ? t * 0.7 : t * 1.6;
		p.overhead_us = sg->nodes * 0.3;
		p.flops = flops;
		p.bytes_fused = bytes;
		p.bytes_unfused = sg->bytes_unfused;
		p.status = "ok";
		if (ratio > 20) {
			add_flag(&p, flags, "slow");
			j->slow++;
		}
		if (sg->bytes_fused > 0 ? sg->bytes_unfused > 1.5 * sg->bytes_fused
					: h[9] % 3 == 0 && sg->nodes > 1)
			add_flag(&p, flags, "fusible");
		if (p.overhead_us > t / 2)
			add_flag(&p, flags, "overhead-bound");
		if (p.median_1thread_us < t)
			add_flag(&p, flags, "parallel-slowdown");
		if (h[6] % 12 == 0) {
			p.status = "unstable";
			p.has_repeats = 1;
			p.repeats = 2;
			add_flag(&p, flags, "unstable");
			j->unstable++;
		}
		if (j->ort)
			add_ort(j, h, &p, flags, &ort);
	}
	size_t len = passnet__profile__get_packed_size(&p);
	uint8_t *buf = malloc(len ? len : 1);
	if (!buf)
		return -1;
	passnet__profile__pack(&p, buf);
	int rc = pn_put(j->w, PN_T_PROFILES, h, 16, buf, len, j->err);
	free(buf);
	j->profiles += !rc;
	return rc;
}

static int on_subgraph(void *ud, pn_bytes key, pn_bytes val)
{
	job *j = ud;
	const uint8_t *h = key.data;
	if (key.len != 16 || h[15] % 8 == 0)
		return 0;
	Passnet__Subgraph *sg = passnet__subgraph__unpack(NULL, val.len, val.data);
	if (!sg)
		return 0;
	int rc = put_profile(j, h, sg);
	passnet__subgraph__free_unpacked(sg, NULL);
	return rc;
}

int main(int argc, char **argv)
{
	job j = {0};
	j.ort = argc == 3 && !strcmp(argv[1], "--ort");
	if (argc != 2 + j.ort) {
		fprintf(stderr, "usage: mkprofiles [--ort] DB\n");
		return 2;
	}
	const char *db = argv[1 + j.ort];
	pn_store *s;
	pn_rtxn *t;
	if (pn_store_open(&s, db, 0, j.err) || pn_writer_open(s, &j.w, 0, j.err) ||
	    pn_rtxn_begin(s, &t, j.err)) {
		fprintf(stderr, "mkprofiles: %s\n", j.err);
		return 1;
	}
	int rc = pn_foreach(t, PN_T_SUBGRAPHS, NULL, 0, on_subgraph, &j);
	pn_rtxn_end(t);
	if (pn_writer_close(j.w, j.err) || rc) {
		fprintf(stderr, "mkprofiles: %s\n", j.err[0] ? j.err : "failed");
		return 1;
	}
	pn_store_close(s);
	printf("profiles %ld failed %ld unstable %ld slow %ld", j.profiles, j.failed, j.unstable,
	       j.slow);
	if (j.ort)
		printf(" ort %ld regressions %ld", j.ort_timed, j.ort_regressions);
	putchar('\n');
	return 0;
}
