/*
 * test_parse_options.c - the option tables of cmd/parse_options.h: every
 * kind of value, both spellings of a value, short aliases, `--`, the
 * arguments handed back, and what is refused (unknown options, missing or
 * malformed values), then the usage and help made from a table.
 *
 * Errors print a line and the usage on stderr; that noise is expected.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/parse_options.h"
#include "common/err.h"

/* Destinations of the test table, reset before every case. */
static struct {
	int flag, quiet, n;
	int64_t big;
	uint64_t seed;
	double rate;
	const char *name, *out;
	pn_strlist ops;
	char dims[256];
	int cb_calls;
} d;

/* A callback that accepts "K=V" and keeps what it saw. */
static int kv(void *dest, const char *value, char *err)
{
	char *buf = dest;
	if (!strchr(value, '='))
		return pn_fail(err, "wants K=V, got '%s'", value);
	d.cb_calls++;
	strncat(buf, value, 255 - strlen(buf));
	strncat(buf, ";", 255 - strlen(buf));
	return 0;
}

static const pn_option inner[] = {
	PN_STRING(0, "name", "NAME", &d.name, NULL, "a name from an included table"),
	PN_OPT_TABLE_END,
};

static const pn_option table[] = {
	PN_FLAG(0, "flag", &d.flag, "a flag"),
	PN_FLAG('q', "quiet", &d.quiet, "a flag with a short alias"),
	PN_INT('n', "count", "N", &d.n, "7", "an int"),
	PN_INT64(0, "big", "B", &d.big, NULL, "an int64"),
	PN_UINT64(0, "seed", "S", &d.seed, "1", "a uint64"),
	PN_DOUBLE(0, "rate", "R", &d.rate, "0.5", "a double"),
	PN_LIST(0, "ops", "A,B", &d.ops, "a repeatable list"),
	PN_CALLBACK(0, "dim", "K=V", d.dims, kv, NULL, "a callback"),
	PN_INCLUDE(inner),
	PN_OPT_TABLE_END,
};

static const pn_option with_required[] = {
	PN_REQUIRED(0, "out", "DIR", &d.out, "where to write"),
	PN_OPT_TABLE_END,
};

static const pn_usage usage = {"passnet demo", "[FILE...]", "Details of the demo.\n", table};

/* argv[] the parser may reorder, from a NULL-ended list of words. */
#define ARGV(...) make_argv((const char *[]){__VA_ARGS__, NULL})
static char *owned[64], *words[64];   /* the parser reorders words, not owned */
static int n_words;

static char **make_argv(const char **w)
{
	for (int i = 0; i < n_words; i++)
		free(owned[i]);
	n_words = 0;
	while (w[n_words]) {
		owned[n_words] = words[n_words] = strdup(w[n_words]);
		n_words++;
	}
	words[n_words] = NULL;
	return words;
}

static int reset(void **state)
{
	(void)state;
	pn_strlist_free(&d.ops);
	memset(&d, 0, sizeof d);
	d.n = 7;
	d.seed = 1;
	d.rate = 0.5;
	return 0;
}

static int parse(const pn_usage *u, char **argv, unsigned flags, int *nargs)
{
	int argc = 0;
	while (argv[argc])
		argc++;
	return pn_parse_options(u, argc, argv, flags, nargs);
}

/* 1. Flags: long, short; values untouched when not given. */
static void test_01_flags(void **state)
{
	(void)state;
	int n;
	assert_int_equal(parse(&usage, ARGV("--flag", "-q"), 0, &n), 0);
	assert_int_equal(d.flag, 1);
	assert_int_equal(d.quiet, 1);
	assert_int_equal(n, 0);
	assert_int_equal(d.n, 7);
	assert_null(d.name);
}

/* 2. Every value kind, as "--name VALUE". */
static void test_02_kinds(void **state)
{
	(void)state;
	int n;
	assert_int_equal(parse(&usage,
			       ARGV("--count", "-3", "--big", "-9000000000", "--seed",
				    "18446744073709551615", "--rate", "2.5e-3", "--name", "x"),
			       0, &n),
			 0);
	assert_int_equal(d.n, -3);
	assert_true(d.big == -9000000000LL);
	assert_true(d.seed == UINT64_MAX);
	assert_true(d.rate == 2.5e-3);
	assert_string_equal(d.name, "x");
	assert_int_equal(n, 0);
}

/* 3. "--name=VALUE", "-nVALUE" and "-n VALUE"; the last value wins. */
static void test_03_equals_and_short(void **state)
{
	(void)state;
	int n;
	assert_int_equal(parse(&usage, ARGV("--count=4", "--rate=1", "--name=a=b", "--seed=0"), 0, &n), 0);
	assert_int_equal(d.n, 4);
	assert_true(d.rate == 1.0);
	assert_string_equal(d.name, "a=b");
	assert_true(d.seed == 0);
	assert_int_equal(parse(&usage, ARGV("-n12"), 0, &n), 0);
	assert_int_equal(d.n, 12);
	assert_int_equal(parse(&usage, ARGV("-n", "13", "--count", "14"), 0, &n), 0);
	assert_int_equal(d.n, 14);
	/* An empty value after '=' is a value: a string may be empty. */
	assert_int_equal(parse(&usage, ARGV("--name="), 0, &n), 0);
	assert_string_equal(d.name, "");
}

/* 4. A value missing at the end of the line is an error. */
static void test_04_missing_value(void **state)
{
	(void)state;
	int n;
	assert_int_equal(parse(&usage, ARGV("--count"), 0, &n), PN_PARSE_ERROR);
	assert_int_equal(parse(&usage, ARGV("a", "--name"), 0, &n), PN_PARSE_ERROR);
	assert_int_equal(parse(&usage, ARGV("-n"), 0, &n), PN_PARSE_ERROR);
}

/* 5. Unknown options are errors; kept (in order) when asked to. */
static void test_05_unknown(void **state)
{
	(void)state;
	int n;
	assert_int_equal(parse(&usage, ARGV("--bogus"), 0, &n), PN_PARSE_ERROR);
	assert_int_equal(parse(&usage, ARGV("-x"), 0, &n), PN_PARSE_ERROR);
	/* No abbreviations: --coun is not --count. */
	assert_int_equal(parse(&usage, ARGV("--coun", "3"), 0, &n), PN_PARSE_ERROR);
	/* A flag given a value. */
	assert_int_equal(parse(&usage, ARGV("--flag=1"), 0, &n), PN_PARSE_ERROR);
	char **argv = ARGV("ls", "--bogus", "--count", "5", "-h", "x", "--flag");
	assert_int_equal(parse(&usage, argv, PN_PARSE_KEEP_UNKNOWN, &n), 0);
	assert_int_equal(n, 4);
	assert_string_equal(argv[0], "ls");
	assert_string_equal(argv[1], "--bogus");
	assert_string_equal(argv[2], "-h");
	assert_string_equal(argv[3], "x");
	assert_null(argv[4]);
	assert_int_equal(d.n, 5);
	assert_int_equal(d.flag, 1);
}

/* 6. Malformed numbers are errors, whatever the kind. */
static void test_06_bad_numbers(void **state)
{
	(void)state;
	static const char *const bad_int[] = {"x", "3x", "", " ", "1.5", "99999999999", "0x10"};
	int n;
	for (size_t i = 0; i < sizeof bad_int / sizeof *bad_int; i++) {
		assert_int_equal(parse(&usage, ARGV("--count", bad_int[i]), 0, &n), PN_PARSE_ERROR);
		assert_int_equal(d.n, 7);
	}
	assert_int_equal(parse(&usage, ARGV("--big", "99999999999999999999"), 0, &n), PN_PARSE_ERROR);
	assert_int_equal(parse(&usage, ARGV("--seed", "-1"), 0, &n), PN_PARSE_ERROR);
	assert_int_equal(parse(&usage, ARGV("--seed", "18446744073709551616"), 0, &n), PN_PARSE_ERROR);
	assert_int_equal(parse(&usage, ARGV("--rate", "1e"), 0, &n), PN_PARSE_ERROR);
	assert_int_equal(parse(&usage, ARGV("--rate", "nan"), 0, &n), PN_PARSE_ERROR);
	assert_int_equal(parse(&usage, ARGV("--rate="), 0, &n), PN_PARSE_ERROR);
	assert_true(d.rate == 0.5);
}

/* 7. "--" ends the options: what follows is handed back as arguments. */
static void test_07_double_dash(void **state)
{
	(void)state;
	int n;
	char **argv = ARGV("a", "--", "--count", "3", "-q");
	assert_int_equal(parse(&usage, argv, 0, &n), 0);
	assert_int_equal(n, 4);
	assert_string_equal(argv[0], "a");
	assert_string_equal(argv[1], "--count");
	assert_string_equal(argv[2], "3");
	assert_string_equal(argv[3], "-q");
	assert_int_equal(d.n, 7);
	assert_int_equal(d.quiet, 0);
	/* Kept for a second parse when unknowns are kept. */
	argv = ARGV("x", "--", "--count", "3");
	assert_int_equal(parse(&usage, argv, PN_PARSE_KEEP_UNKNOWN, &n), 0);
	assert_int_equal(n, 4);
	assert_string_equal(argv[1], "--");
	assert_int_equal(d.n, 7);
}

/* 8. Arguments come back in order, "-" among them; argv[n] is NULL. */
static void test_08_arguments(void **state)
{
	(void)state;
	int n;
	char **argv = ARGV("one", "--count", "2", "-", "two", "-q", "three");
	assert_int_equal(parse(&usage, argv, 0, &n), 0);
	assert_int_equal(n, 4);
	assert_string_equal(argv[0], "one");
	assert_string_equal(argv[1], "-");
	assert_string_equal(argv[2], "two");
	assert_string_equal(argv[3], "three");
	assert_null(argv[4]);
	/* A value that looks like an option is still the value. */
	assert_int_equal(parse(&usage, ARGV("--name", "--flag"), 0, &n), 0);
	assert_string_equal(d.name, "--flag");
	assert_int_equal(d.flag, 0);
}

/* 9. A repeatable list: every occurrence, split at commas, empty pieces
 * dropped. */
static void test_09_list(void **state)
{
	(void)state;
	int n;
	assert_int_equal(parse(&usage, ARGV("--ops", "Conv,Relu", "--ops=Add", "--ops", ",,Mul,"), 0, &n), 0);
	assert_int_equal(d.ops.n, 4);
	assert_string_equal(d.ops.v[0], "Conv");
	assert_string_equal(d.ops.v[1], "Relu");
	assert_string_equal(d.ops.v[2], "Add");
	assert_string_equal(d.ops.v[3], "Mul");
	assert_null(d.ops.v[4]);
	pn_strlist_free(&d.ops);
	assert_int_equal(d.ops.n, 0);
	assert_null(d.ops.v);
}

/* 10. A callback sees each value; its refusal is a usage error. */
static void test_10_callback(void **state)
{
	(void)state;
	int n;
	assert_int_equal(parse(&usage, ARGV("--dim", "N=2", "--dim=M=3"), 0, &n), 0);
	assert_int_equal(d.cb_calls, 2);
	assert_string_equal(d.dims, "N=2;M=3;");
	assert_int_equal(parse(&usage, ARGV("--dim", "N"), 0, &n), PN_PARSE_ERROR);
	assert_int_equal(d.cb_calls, 2);
}

/* 11. Options of an included table are parsed like the table's own. */
static void test_11_include(void **state)
{
	(void)state;
	int n;
	assert_int_equal(parse(&usage, ARGV("--name", "inc", "-q"), 0, &n), 0);
	assert_string_equal(d.name, "inc");
	assert_int_equal(d.quiet, 1);
}

/* 12. A required option: an error when absent, parsed when given. */
static void test_12_required(void **state)
{
	(void)state;
	pn_usage u = {"passnet req", NULL, NULL, with_required};
	int n;
	assert_int_equal(parse(&u, ARGV("x"), 0, &n), PN_PARSE_ERROR);
	assert_int_equal(parse(&u, ARGV("--out", "dir"), 0, &n), 0);
	assert_string_equal(d.out, "dir");
}

/* 13. -h and --help anywhere ask for help (printed on stdout). */
static void test_13_help_flag(void **state)
{
	(void)state;
	int n;
	assert_int_equal(parse(&usage, ARGV("a", "--count", "3", "--help"), 0, &n), PN_PARSE_HELP);
	assert_int_equal(parse(&usage, ARGV("-h"), 0, &n), PN_PARSE_HELP);
}

/* 14. The help made from the table names every option, with its short
 * alias, placeholder, help text and default; the usage line has every
 * option and the arguments. */
static void test_14_help_text(void **state)
{
	(void)state;
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	assert_non_null(f);
	pn_usage_help(&usage, f);
	fclose(f);
	static const char *const want[] = {
		"usage: passnet demo ", "[--flag]", "[-q]", "[-n N]", "[--big B]", "[--seed S]",
		"[--rate R]", "[--ops A,B]...", "[--dim K=V]...", "[--name NAME]", "[FILE...]",
		"Details of the demo.", "  --flag ", "  -q, --quiet ", "  -n, --count N ",
		"an int (default 7)", "  --big B ", "an int64", "  --seed S ", "a uint64 (default 1)",
		"  --rate R ", "a double (default 0.5)", "  --ops A,B ", "a repeatable list",
		"  --dim K=V ", "a callback", "  --name NAME ", "a name from an included table",
	};
	for (size_t i = 0; i < sizeof want / sizeof *want; i++)
		if (!strstr(text, want[i]))
			fail_msg("help lacks '%s':\n%s", want[i], text);
	/* No line is wider than the 80 columns it is wrapped for. */
	for (char *line = text, *nl; *line; line = nl + 1) {
		nl = strchr(line, '\n');
		assert_non_null(nl);
		if (nl - line > 80)
			fail_msg("line of %d columns: %.*s", (int)(nl - line), (int)(nl - line), line);
	}
	free(text);

	char syn[512];
	pn_usage_synopsis(&usage, syn, sizeof syn);
	assert_string_equal(syn, "[--flag] [-q] [-n N] [--big B] [--seed S] [--rate R] [--ops A,B]... "
				 "[--dim K=V]... [--name NAME] [FILE...]");
	pn_usage u = {"passnet req", "X", NULL, with_required};
	pn_usage_synopsis(&u, syn, sizeof syn);
	assert_string_equal(syn, "--out DIR X");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_01_flags, reset),
		cmocka_unit_test_setup(test_02_kinds, reset),
		cmocka_unit_test_setup(test_03_equals_and_short, reset),
		cmocka_unit_test_setup(test_04_missing_value, reset),
		cmocka_unit_test_setup(test_05_unknown, reset),
		cmocka_unit_test_setup(test_06_bad_numbers, reset),
		cmocka_unit_test_setup(test_07_double_dash, reset),
		cmocka_unit_test_setup(test_08_arguments, reset),
		cmocka_unit_test_setup(test_09_list, reset),
		cmocka_unit_test_setup(test_10_callback, reset),
		cmocka_unit_test_setup(test_11_include, reset),
		cmocka_unit_test_setup(test_12_required, reset),
		cmocka_unit_test_setup(test_13_help_flag, reset),
		cmocka_unit_test_setup(test_14_help_text, reset),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	make_argv((const char *[]){NULL});
	pn_strlist_free(&d.ops);
	return rc;
}
