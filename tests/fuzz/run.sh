#!/bin/sh
# run.sh SECONDS HARNESS... - runs each libFuzzer harness of build/fuzz/ for
# SECONDS, one after another, one process each (-jobs=1 -workers=1), on its
# seeds (build/fuzz/seeds/<h>, `make fuzz-seeds`) and the corpus earlier runs
# grew (build/fuzz/corpus/<h>), and prints per harness the executions, the
# coverage of libFuzzer's final stats line (cov: edges, ft: features) and
# any crash file (build/fuzz/crashes/<h>/), then the total executions.
# Exit status 1 if any harness left a crash file.  FUZZ_SEED=S fixes
# libFuzzer's random seed (0, the default, lets it pick one), so a run can
# be repeated on the same machine (.ci/run uses 1).
set -u
secs=$1
shift
root=$(cd "$(dirname "$0")/../.." && pwd)
fz=$root/build/fuzz
total=0
crashed=0
printf '%-13s %12s %8s %8s  %s\n' harness executions cov ft crashes
for h in "$@"; do
	dict=
	case $h in onnx_model|tensorproto) dict=-dict=$root/tests/fuzz/onnx.dict ;; esac
	mkdir -p "$fz/corpus/$h" "$fz/crashes/$h" "$fz/logs/$h"
	# with -jobs the fuzzing process writes its output to fuzz-0.log in
	# its working directory
	(cd "$fz/logs/$h" && rm -f fuzz-0.log &&
	 "$fz/$h" -jobs=1 -workers=1 -max_total_time="$secs" -timeout=25 -rss_limit_mb=2048 \
		-print_final_stats=1 -artifact_prefix="$fz/crashes/$h/" -seed="${FUZZ_SEED:-0}" $dict \
		"$fz/corpus/$h" "$fz/seeds/$h" >/dev/null 2>&1)
	log=$fz/logs/$h/fuzz-0.log
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
	[ -n "$execs" ] || execs=$(grep -o '^#[0-9]*' "$log" | tail -n 1 | tr -d '#')
	cov=$(grep -o 'cov: [0-9]*' "$log" | tail -n 1 | cut -d' ' -f2)
	ft=$(grep -o 'ft: [0-9]*' "$log" | tail -n 1 | cut -d' ' -f2)
	crashes=$(ls "$fz/crashes/$h" 2>/dev/null | sed "s|^|build/fuzz/crashes/$h/|" | tr '\n' ' ')
	[ -z "$crashes" ] || crashed=1
	printf '%-13s %12s %8s %8s  %s\n' "$h" "${execs:-0}" "${cov:-?}" "${ft:-?}" "${crashes:-none}"
	total=$((total + ${execs:-0}))
done
printf 'total executions: %d (%s s per harness, %s)\n' "$total" "$secs" "$(date -u +%Y-%m-%d)"
exit $crashed
