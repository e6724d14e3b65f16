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
#         points it at ../shared/corpus)
set -u
cd "$(dirname "$0")/.."
what=${1:-all}
if [ "$what" = corpus ]; then
	[ -n "${PASSNET_CORPUS:-}" ] && [ -d "$PASSNET_CORPUS/models" ] || {
		echo "run-all.sh corpus: PASSNET_CORPUS (${PASSNET_CORPUS:-unset}) is not a corpus with models/" >&2
		exit 1
	}
fi
passed=0
failed=0
failed_names=""

run() {
	name=$1
	shift
	"$@" >"$log" 2>&1
	rc=$?
	if [ "$rc" -eq 0 ]; then
		passed=$((passed + 1))
		printf 'PASS %s\n' "$name"
	else
		failed=$((failed + 1))
		failed_names="$failed_names $name"
		printf 'FAIL %s\n' "$name"
		sed 's/^/    /' "$log" | tail -n 40
	fi
}

log=$(mktemp)
trap 'rm -f "$log"' EXIT

if [ "$what" = unit ] || [ "$what" = all ]; then
	for t in build/tests/test_*; do
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
		run "cli/$(basename "$t" .sh)" env PASSNET="$PWD/bin/passnet" TEST_TMP="$tmp" \
			ROOT="$PWD" sh "$t"
		rm -rf "$tmp"
	done
fi

echo "tests: $passed passed, $failed failed"
[ "$failed" -eq 0 ] || { echo "failed:$failed_names"; exit 1; }
