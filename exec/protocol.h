/*
 * protocol.h - how many timed runs a subgraph gets: the rule that stops
 * the trials once the median is known as well as the flags need it.
 *
 * Two protocols, named in each profile (Profile.protocol):
 *
 *   full      W warm-ups, one run that sizes a trial, T trials, on the
 *             timing threads and again on 1 thread: (W + 1 + T) x 2 runs,
 *             more while unstable.  What every profile used before the
 *             adaptive one, and the reference it is checked against
 *             (make bench-protocol).
 *   adaptive  one warm-up on the timing threads, timed, which sizes a
 *             trial; then trials, at least PN_PROTOCOL_MIN_TRIALS and at
 *             most T, stopped by pn_trials_enough; on 1 thread (when timing
 *             uses more) the same trials without a warm-up (the session,
 *             its buffers and its weights are as warm as the N-thread
 *             trials left them), and there one trial is enough when it
 *             is further than PN_PROTOCOL_FAR from the phase's threshold.
 *             A subgraph near no threshold costs 1 + 3 + 1 runs (1 + 3 + 3
 *             when the 1-thread time is within PN_PROTOCOL_FAR of the
 *             threshold: a subgraph the kernels do not split); one near a
 *             threshold gets the published 3 + 5 floor's trials (its
 *             warm-ups are the runs before).
 *
 * The rule (pn_trials_enough): after n >= min trials, with m the median and
 * q the IQR of the n times, stop when q/m <= PN_UNSTABLE_IQR (a stable
 * sample) and every threshold X the flags compare the median with is
 * further from m than the band: |m/X - 1| > max(PN_PROTOCOL_NEAR,
 * q/m + spread), where spread is the relative IQR of what X itself was
 * measured from (the N-thread median, for parallel-slowdown's threshold on
 * the 1-thread median; 0 for a threshold from the cost model).  An
 * unstable sample or a median in a band goes on to T trials; unstable
 * after T, the whole phase is measured again as before (--repeats).
 *
 * Before the floor, a rule with `far` set (the 1-thread phase's: no flag
 * reads its spread) stops once every threshold is further than far +
 * spread from the median of what it has: a 1-thread time of 1.8 x the
 * N-thread one, a kernel split on 2 cores, cannot be a parallel slowdown
 * (1.1 x) by noise, and a second look would time both again anyway.
 */
#ifndef PN_PROTOCOL_H
#define PN_PROTOCOL_H

#include <stddef.h>

#define PN_UNSTABLE_IQR 0.2
#define PN_PROTOCOL_MIN_TRIALS 3
/* A median closer than this (relative) to a threshold is "near" it. */
#define PN_PROTOCOL_NEAR 0.05
#define PN_PROTOCOL_MAX_THRESHOLDS 4
/* A median further than this (relative) from every threshold needs no
 * floor of trials where the rule allows it (far). */
#define PN_PROTOCOL_FAR 0.5

enum pn_protocol { PN_PROTOCOL_ADAPTIVE, PN_PROTOCOL_FULL, PN_N_PROTOCOLS };
extern const char *const pn_protocol_names[PN_N_PROTOCOLS];
/* The protocol named `name`, or -1. */
int pn_protocol_index(const char *name);

/* What the median of one phase is compared with: thresholds x[0..n) (a
 * value <= 0 is none), each known to a relative spread. */
typedef struct pn_stop_rule {
	int min_trials, max_trials;
	double far; /* > 0: fewer than min_trials are enough this far from every threshold */
	int n;
	double x[PN_PROTOCOL_MAX_THRESHOLDS];
	double spread[PN_PROTOCOL_MAX_THRESHOLDS];
} pn_stop_rule;

/* Adds threshold x known to relative spread s (ignored when x <= 0 or the
 * rule is full). */
void pn_stop_rule_add(pn_stop_rule *r, double x, double s);

/* 1 when the n trial times t[0..n) are enough under rule r: n reached
 * max_trials, or n >= min_trials and the sample is stable and far from
 * every threshold, or (rule with far) its median is further than far from
 * every threshold and there is one (see above). */
int pn_trials_enough(const double *t, int n, const pn_stop_rule *r);

/* The protocol's text as profiles record it among their thresholds. */
void pn_protocol_text(int protocol, int warmups, int trials, char *buf, size_t cap);

#endif
