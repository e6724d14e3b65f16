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
# cli/check"; shell patterns too: "unit/*").  PN_JOBS tests run at a time
# (default: 2 on a machine of 2 cores or more); each test's line gives its
# wall time, and the failed tests' output follows the last line.
set -u
self=$(cd "$(dirname "$0")" && pwd)/run-all.sh
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

# run_one NAME: runs one test, its output in $results/<NAME>.log, its status
# in <NAME>.rc, and prints its PASS or FAIL line (one short write, so lines
# of tests run side by side do not mix).
run_one() {
	name=$1
	file=$results/$(echo "$name" | tr / _)
	if [ -n "${PN_SAN_LOG_DIR:-}" ]; then   # sanitize.sh: each test its own reports
		san_dir=$PN_SAN_LOG_DIR/$(echo "$name" | tr / _)
		mkdir -p "$san_dir"
		export ASAN_OPTIONS="$ASAN_OPTIONS:log_path=$san_dir/report"
		export UBSAN_OPTIONS="$UBSAN_OPTIONS:log_path=$san_dir/report"
	fi
	t0=$(date +%s)
	case $name in
	unit/*) "$unit_dir/${name#unit/}" >"$file.log" 2>&1 ;;
	cli/*)
		tmp=$(mktemp -d)
		env PASSNET="$bin" TEST_TMP="$tmp" ROOT="$PWD" MKARCHIVE="$tools_dir/mkarchive" \
			MKPROFILES="$tools_dir/mkprofiles" sh "tests/cli/${name#cli/}.sh" >"$file.log" 2>&1
		rc=$?
		rm -rf "$tmp"
		(exit $rc) ;;
	esac
	rc=$?
	if [ -n "${PN_AFTER_TEST:-}" ]; then
		$PN_AFTER_TEST "$name" >>"$file.log" 2>&1 || rc=1
	fi
	echo "$rc" >"$file.rc"
	word=PASS
	[ "$rc" -eq 0 ] || word=FAIL
	printf '%s %s (%d s)\n' "$word" "$name" $(($(date +%s) - t0))
}

if [ "${1:-}" = --one ]; then
	run_one "$2"
	exit 0
fi

# The tests chosen, one name a line.
list_tests() {
	if [ "$what" = unit ] || [ "$what" = all ]; then
		for t in "$unit_dir"/test_*; do
			[ -x "$t" ] || continue
			case "$t" in *.d) continue ;; esac
			selected "unit/$(basename "$t")" && echo "unit/$(basename "$t")"
		done
	fi
	if [ "$what" = cli ] || [ "$what" = all ] || [ "$what" = corpus ]; then
		for t in tests/cli/*.sh; do
			[ -f "$t" ] || continue
			case "$(basename "$t")" in lib.sh) continue ;; esac
			[ "$what" != corpus ] || grep -q '^need_corpus' "$t" || continue
			selected "cli/$(basename "$t" .sh)" && echo "cli/$(basename "$t" .sh)"
		done
	fi
	return 0
}

results=$(mktemp -d)
trap 'rm -rf "$results"' EXIT
export results what bin unit_dir tools_dir only
# PN_JOBS tests at a time (default 2, or 1 on a one-core machine): most tests
# spend much of their time in one thread (Python oracles, npm, mpirun and
# Slurm start-up, single-threaded export-onnx and check), so two side by side
# fill a 2-core machine.  Under sanitize.sh each test writes its reports
# into a folder of its own (PN_SAN_LOG_DIR), so they run side by side too.
jobs=${PN_JOBS:-$(nproc 2>/dev/null || echo 1)}
[ "$jobs" -le 2 ] || jobs=2
# Two tests side by side each run OpenMP teams as wide as the machine, so
# a thread often waits at a barrier for one the other test has descheduled.
# libgomp's default then spins for its whole time slice (export_dtypes: 40
# s alone, 281-497 s beside another test); passive waiting sleeps instead.
# A test that sets the policy itself keeps its own.
[ "$jobs" -le 1 ] || export OMP_WAIT_POLICY="${OMP_WAIT_POLICY:-passive}"
list_tests | xargs -r -P "$jobs" -n 1 sh "$self" --one

passed=0
failed=0
failed_names=""
for name in $(list_tests); do
	file=$results/$(echo "$name" | tr / _)
	if [ "$(cat "$file.rc" 2>/dev/null)" = 0 ]; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
		failed_names="$failed_names $name"
		echo "--- $name:"
		sed 's/^/    /' "$file.log" 2>/dev/null | tail -n 40
	fi
done
echo "tests: $passed passed, $failed failed"
[ "$failed" -eq 0 ] || { echo "failed:$failed_names"; exit 1; }
