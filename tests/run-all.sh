#!/bin/sh
# run-all.sh - runs passnet's tests and prints one summary line per suite and
# a final "tests: N passed, N failed" line.  Exit status is non-zero if any
# test failed.
#
#   tests/run-all.sh [unit|cli|all|corpus]
#
# unit:   every build/tests/test_* (cmocka programs, one per C test file)
# cli:    every tests/cli/*.sh, run with PASSNET=bin/passnet and a scratch
#         directory in TEST_TMP; a script exits 0 on success, anything else
#         on failure.  No test skips: the tests that read a corpus build the
#         fixture corpus themselves (need_corpus in tests/cli/lib.sh), what
#         else they need comes with `make deps`, and a test that finds it
#         missing fails saying so.
# corpus: the CLI tests that read a corpus (those calling need_corpus),
#         against $PASSNET_CORPUS, which must be set (`make test-corpus`
#         points it at the 71-model test corpus)
#
# Another build's binaries (tests/sanitize.sh: build/san/) are named by
# PN_BIN (bin/passnet), PN_UNIT_DIR (build/tests) and PN_TOOLS_DIR
# (build/tools, passed on to the CLI tests as MKARCHIVE and MKPROFILES).
# PN_AFTER_TEST, when set, is a command run after each test with its name;
# its failure fails the test (sanitize.sh: a sanitizer report was written).
# PN_ONLY, when set, runs only the tests it names (e.g. "unit/test_store
# cli/check"; shell patterns too: "unit/*").  Each test's line gives its
# wall time.
set -u
cd "$(dirname "$0")/.."
what=${1:-all}
if [ "$what" = corpus ]; then
	[ -n "${PASSNET_CORPUS:-}" ] && [ -d "$PASSNET_CORPUS/models" ] || {
		echo "run-all.sh corpus: PASSNET_CORPUS (${PASSNET_CORPUS:-unset}) is not a corpus with models/" >&2
		exit 1
	}
fi
bin=${PN_BIN:-$PWD/bin/passnet}
unit_dir=${PN_UNIT_DIR:-build/tests}
tools_dir=${PN_TOOLS_DIR:-$PWD/build/tools}
only=${PN_ONLY:-}
passed=0
failed=0
failed_names=""

# selected NAME: whether PN_ONLY names the test, as a word or a shell
# pattern ("unit/*" is every unit test).
selected() {
	[ -z "$only" ] && return 0
	set -f
	for pattern in $only; do
		# shellcheck disable=SC2254
		case "$1" in $pattern) set +f; return 0 ;; esac
	done
	set +f
	return 1
}

run() {
	name=$1
	shift
	selected "$name" || return 0
	t0=$(date +%s)
	"$@" >"$log" 2>&1
	rc=$?
	if [ -n "${PN_AFTER_TEST:-}" ]; then
		$PN_AFTER_TEST "$name" >>"$log" 2>&1 || rc=1
	fi
	if [ "$rc" -eq 0 ]; then
		passed=$((passed + 1))
		printf 'PASS %s (%d s)\n' "$name" $(($(date +%s) - t0))
	else
		failed=$((failed + 1))
		failed_names="$failed_names $name"
		printf 'FAIL %s (%d s)\n' "$name" $(($(date +%s) - t0))
		sed 's/^/    /' "$log" | tail -n 40
	fi
}

log=$(mktemp)
trap 'rm -f "$log"' EXIT

if [ "$what" = unit ] || [ "$what" = all ]; then
	for t in "$unit_dir"/test_*; do
		[ -x "$t" ] || continue
		case "$t" in *.d) continue ;; esac
		run "unit/$(basename "$t")" "$t"
	done
fi

if [ "$what" = cli ] || [ "$what" = all ] || [ "$what" = corpus ]; then
	for t in tests/cli/*.sh; do
		[ -f "$t" ] || continue
		case "$(basename "$t")" in lib.sh) continue ;; esac
		[ "$what" != corpus ] || grep -q '^need_corpus' "$t" || continue
		tmp=$(mktemp -d)
		run "cli/$(basename "$t" .sh)" env PASSNET="$bin" TEST_TMP="$tmp" \
			ROOT="$PWD" MKARCHIVE="$tools_dir/mkarchive" \
			MKPROFILES="$tools_dir/mkprofiles" sh "$t"
		rm -rf "$tmp"
	done
fi

echo "tests: $passed passed, $failed failed"
[ "$failed" -eq 0 ] || { echo "failed:$failed_names"; exit 1; }
