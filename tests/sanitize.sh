#!/bin/sh
# sanitize.sh - the whole suite (tests/run-all.sh) against the sanitized build
# in build/san/ (`make test-sanitize` builds it: AddressSanitizer with
# LeakSanitizer, and UndefinedBehaviorSanitizer).
#
#   tests/sanitize.sh [unit|cli|all]     (SAN_ONLY="unit/test_x cli/y": only those)
#
# Every sanitizer report is written to a file under $SAN_LOGS (log_path)
# rather than to stderr: a test that expects passnet to fail (bad input) would
# otherwise pass over a report, and a test reading stderr would see it as
# output.  After each test the report files it left fail it and are printed.
set -u
cd "$(dirname "$0")/.."
root=$PWD
san=$root/build/san

# The hook run-all.sh calls after each test (PN_AFTER_TEST): the reports the
# test's processes wrote (run-all.sh points log_path at $SAN_LOGS/new/<test>/
# through PN_SAN_LOG_DIR, so tests run side by side keep theirs apart) fail
# it; they are kept under $SAN_LOGS/<test>/.
if [ "${1:-}" = --after ]; then
	name=$2
	set -- "$SAN_LOGS/new/$(echo "$name" | tr / _)"/*
	[ -e "$1" ] || exit 0
	keep="$SAN_LOGS/$(echo "$name" | tr / _)"
	mkdir -p "$keep"
	for f in "$@"; do
		echo "sanitizer report $keep/$(basename "$f"):"
		head -n 60 "$f"
		mv "$f" "$keep/"
	done
	exit 1
fi

for f in "$san/bin/passnet" "$san/tools/mkarchive" "$san/tools/mkprofiles"; do
	[ -x "$f" ] || { echo "sanitize.sh: no $f (make sanitize-build)" >&2; exit 1; }
done

SAN_LOGS=${SAN_LOGS:-$san/logs}
rm -rf "$SAN_LOGS"
mkdir -p "$SAN_LOGS/new"
export SAN_LOGS
# abort_on_error: a report ends the process with SIGABRT, a status no test
# mistakes for passnet's own error exit (1).  detect_leaks: memory still held
# at exit is a report too (tests/lsan.supp would list what is held by design).
# UBSan, linked in with ASan (Makefile: SAN_LDFLAGS), reads the options common
# to both from UBSAN_OPTIONS after ASan has read them from ASAN_OPTIONS, so
# both get the same common set.  check_initialization_order and
# strict_init_order catch globals read before their initialiser in another
# file; detect_odr_violation=2 a global defined twice.
# log_path is added per test by run-all.sh (PN_SAN_LOG_DIR).
common="halt_on_error=1:abort_on_error=1:print_stacktrace=1:detect_leaks=1:log_exe_name=1"
export ASAN_OPTIONS="$common:check_initialization_order=1:strict_init_order=1:\
detect_odr_violation=2"
export LSAN_OPTIONS="suppressions=$root/tests/lsan.supp:print_suppressions=0"
export UBSAN_OPTIONS="$common"
export PN_SAN_LOG_DIR="$SAN_LOGS/new"

start=$(date +%s)
PN_BIN="$san/bin/passnet" PN_UNIT_DIR="$san/tests" PN_TOOLS_DIR="$san/tools" \
	PN_ONLY="${SAN_ONLY:-}" PN_AFTER_TEST="sh $root/tests/sanitize.sh --after" \
	tests/run-all.sh "${1:-all}"
rc=$?
echo "sanitized suite: $(($(date +%s) - start)) s; reports (if any) under $SAN_LOGS"
exit $rc
