#!/bin/sh
# fuzz_regressions.sh - every input the fuzzers crashed on (tests/fuzz/
# regressions/<harness>/, each fixed since) and every seed (tests/fuzz/
# mkseeds.sh) goes once through its harness's LLVMFuzzerTestOneInput,
# built by gcc with tests/fuzz/replay.c (build/fuzz-replay/<harness>), one
# process per file: each must return, exit status 0.  No clang needed.
. "$ROOT/tests/cli/lib.sh"
harnesses="onnx_model archive manifest tensorproto canon_decode json check_task torchscript"
for h in $harnesses; do
	[ -x "$ROOT/build/fuzz-replay/$h" ] || fail "no build/fuzz-replay/$h (make test builds it)"
done
[ -x "$ROOT/build/tools/canon_seeds" ] || fail "no build/tools/canon_seeds (make test builds it)"
"$ROOT/tests/fuzz/mkseeds.sh" "$TEST_TMP/seeds" "$ROOT/build/tools/canon_seeds" >/dev/null ||
	fail "mkseeds.sh failed"
files=0
regressions=0
for h in $harnesses; do
	seeds=$(ls "$TEST_TMP/seeds/$h" | wc -l)
	[ "$seeds" -gt 0 ] || fail "no seeds for $h"
	for f in "$TEST_TMP/seeds/$h"/* "$ROOT/tests/fuzz/regressions/$h"/*; do
		[ -f "$f" ] || continue
		set +e
		"$ROOT/build/fuzz-replay/$h" "$f" >"$TEST_TMP/replay.out" 2>&1
		rc=$?
		set -e
		[ "$rc" -eq 0 ] || fail "$h: ${f#"$ROOT/"} exits with status $rc: $(tail -n 3 "$TEST_TMP/replay.out")"
		grep -qx "ok $f" "$TEST_TMP/replay.out" || fail "$h: ${f#"$ROOT/"} did not return"
		files=$((files + 1))
		case $f in "$ROOT"/*) regressions=$((regressions + 1)) ;; esac
	done
done
[ "$regressions" -gt 0 ] || fail "no regression inputs under tests/fuzz/regressions/"
echo "fuzz_regressions: $files files replayed ($regressions regression inputs), none crashed"
