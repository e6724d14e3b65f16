/*
 * omp_serial.c - an OpenMP parallel region that one thread would run is
 * run as a plain call.
 *
 * GCC lowers `#pragma omp parallel` to GOMP_parallel(fn, data, n, flags),
 * with n = 1 when the region's if() clause is false or its num_threads is
 * 1.  libgomp still builds a team of one for such a region and ends it at
 * a barrier whose last arriver wakes the waiters with a futex call: about
 * 1.2 us and a system call per region on this machine, whatever the work.
 * A kernel below PN_PAR_MIN_WORK, and every kernel of a 1-thread run,
 * enters its region that way, and a small model enters dozens a run
 * (Silero VAD's Pads and Slices: 72 box copies, a third of its run; an
 * openWakeWord head: 7 regions in a run of 15 us).
 *
 * Defined in the executable, this GOMP_parallel takes the calls of
 * passnet's own code.  A region of one thread, met by a thread in no
 * region (a session's run, a kernel's first level), runs fn(data) on the
 * calling thread, which OpenMP's semantics allow: there
 * omp_get_num_threads() is 1 and omp_get_thread_num() 0, so a worksharing
 * loop gives the one thread every iteration, and barriers, reductions and
 * single blocks are those of a team of one.  A region nested in another
 * goes to libgomp as before.  Every other region goes to
 * libgomp's own GOMP_parallel.  Code built by clang calls libomp's
 * __kmpc_fork_call instead and never reaches this.
 */
#include <dlfcn.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

typedef void (*pn_gomp_parallel_fn)(void (*fn)(void *), void *data, unsigned num_threads,
				     unsigned flags);

static pn_gomp_parallel_fn libgomp_parallel;
/* The calling thread is running fn of a region run here. */
static _Thread_local int in_plain_region;

/* Resolved before main, so no thread races for it. */
__attribute__((constructor)) static void find_libgomp_parallel(void)
{
	libgomp_parallel = (pn_gomp_parallel_fn)dlsym(RTLD_NEXT, "GOMP_parallel");
}

void GOMP_parallel(void (*fn)(void *), void *data, unsigned num_threads, unsigned flags);

void GOMP_parallel(void (*fn)(void *), void *data, unsigned num_threads, unsigned flags)
{
	/* Only where the calling thread is in no region at all, neither
	 * libgomp's nor one run here.  Inside a team of several, fn's
	 * worksharing loops would bind to that team and split their
	 * iterations among threads that each run fn whole; inside a team of
	 * one, or inside fn of a region run here, a loop of fn would take the
	 * thread's work-share over from the loop it is nested in, which a
	 * team of its own saves and gives back. */
	int one = num_threads == 1 || (num_threads == 0 && omp_get_max_threads() == 1);
	if (one && !in_plain_region && omp_get_level() == 0) {
		in_plain_region = 1;
		fn(data);
		in_plain_region = 0;
		return;
	}
	if (!libgomp_parallel) {
		fputs("passnet: libgomp's GOMP_parallel not found\n", stderr);
		abort();
	}
	libgomp_parallel(fn, data, num_threads, flags);
}
