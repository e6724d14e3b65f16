/*
 * assert.h - PN_ASSERT(cond): a rule the code relies on, stated where it
 * matters and checked there (SQLite's way: the assert is the invariant's
 * documentation, and the tests run it).
 *
 * A failed assertion is a bug in passnet, never bad input: bad input gets
 * a one-line error and the run goes on (common/err.h).  So the check ends
 * the process at once, with "passnet: internal error: FILE:LINE: FUNCTION:
 * COND" on stderr and SIGABRT (a sanitizer or a core dump then shows the
 * stack), before anything wrong reaches the store.
 *
 * On in every build the Makefile makes, so `make test` and the sanitized
 * and ThreadSanitizer builds check them; -DPN_NDEBUG compiles them out.
 * Keep each one cheap: O(1), or O(n) over what the caller just touched.
 */
#ifndef PN_ASSERT_H
#define PN_ASSERT_H

_Noreturn void pn_assert_fail(const char *file, int line, const char *func, const char *cond);

#ifdef PN_NDEBUG
#define PN_ASSERT(cond) ((void)0)
#else
#define PN_ASSERT(cond) \
	((cond) ? (void)0 : pn_assert_fail(__FILE__, __LINE__, __func__, #cond))
#endif

#endif
