#!/bin/sh
# bench/ort.sh [CORPUS] - passnet's executor against ONNX Runtime, one thread
# each, on a deterministic sample of the corpus's fusion subgraphs.
#
#   N=300 TRIALS=5 WARMUP=2 RTOL=1e-3 ATOL=1e-5 KEEP=DIR bench/ort.sh CORPUS
#
# 1. builds a store from CORPUS and lists its fusion subgraphs;
# 2. samples N of them: every k-th in order of node count, then hash, so the
#    sample spreads over sizes as the whole population does and is the same
#    on every run;
# 3. writes each as a backend-test folder CASE/model.onnx (export-onnx, the
#    weights regenerated with seed 1 into the file) plus
#    CASE/test_data_set_0/input_N.pb (seeded random inputs, written by
#    `passnet run --write-inputs`) and output_N.pb (passnet's outputs);
# 4. times every case with `passnet -j1 time`, with build/bench/ort_time
#    (ORT's C API, from the library the npm package ships: the same timed
#    region and clock as passnet's; the headline) and with bench/ort/time.js
#    (ORT through Node: its profiler's times and the wall time of
#    session.run, for comparison).  All read the same model.onnx and the same
#    input_N.pb files; ORT's outputs are compared with passnet's output_N.pb;
# 5. prints the summary (bench/ort/report.js).
# Cases that fail a step are counted and listed with the reason, never
# dropped silently.  KEEP=DIR keeps the work folder (cases, JSON Lines).
set -eu
cd "$(dirname "$0")/.."
corpus=${1:?usage: bench/ort.sh CORPUS (make bench-ort CORPUS=DIR)}
N=${N:-300}
TRIALS=${TRIALS:-5}
WARMUP=${WARMUP:-2}
RTOL=${RTOL:-1e-3}
ATOL=${ATOL:-1e-5}
[ -d "$corpus" ] || { echo "bench/ort.sh: no corpus at $corpus" >&2; exit 1; }
if [ -n "${KEEP:-}" ]; then
	work=$KEEP
	rm -rf "$work/db" "$work/cases"
	mkdir -p "$work"
else
	work=$(mktemp -d)
	trap 'rm -rf "$work"' EXIT
fi

. bench/ort/cases.sh
ort_setup
ort_version=$(cd bench/ort && node -e 'console.log(require("onnxruntime-node").env.versions.node)')

bin/passnet --db "$work/db" -q build "$corpus" >/dev/null
bin/passnet --db "$work/db" --json ls --subgraphs --strategy fusion > "$work/subgraphs.jsonl"
sed 's/^{"hash":"\([0-9a-f]*\)".*"nodes":\([0-9]*\),.*/\2 \1/' "$work/subgraphs.jsonl" |
	sort -k1,1n -k2,2 > "$work/by_size"
population=$(wc -l < "$work/by_size")
awk -v n="$N" -v p="$population" 'p <= n || NR - 1 == int(j * p / n) { print $2; j++ }' \
	"$work/by_size" > "$work/sample"
echo "sampled $(wc -l < "$work/sample") of $population fusion subgraphs; writing test cases" >&2

: > "$work/failures"
mkdir -p "$work/cases"
while read -r h; do
	c=$work/cases/$h
	mkdir -p "$c"
	if ! msg=$(bin/passnet --db "$work/db" export-onnx "$h" "$c/model.onnx" 2>&1); then
		printf 'export refused\t%s\t%s\n' "$h" "$(echo "$msg" | tail -n 1)" >> "$work/failures"
		rm -rf "$c"
		continue
	fi
	case_inputs "$c" "$h" || true
done < "$work/sample"

ls -d "$work"/cases/* > "$work/case_list"
echo "timing $(wc -l < "$work/case_list") cases with passnet, then ONNX Runtime $ort_version" \
	"(C API, then Node)" >&2
time_cases "$RTOL" "$ATOL" ort_c.jsonl
# shellcheck disable=SC2046
node bench/ort/time.js --json --trials "$TRIALS" --warmup "$WARMUP" --rtol "$RTOL" --atol "$ATOL" \
	$(cat "$work/case_list") > "$work/ort_node.jsonl" 2> "$work/ort_node.err" || true

PN_ORT_VERSION=$ort_version PN_TRIALS=$TRIALS PN_WARMUP=$WARMUP PN_RTOL=$RTOL PN_ATOL=$ATOL \
PN_SAMPLE=$(wc -l < "$work/sample") PN_POPULATION=$population \
	node bench/ort/report.js "$work/subgraphs.jsonl" "$work/passnet.jsonl" "$work/ort_c.jsonl" \
	"$work/ort_node.jsonl" "$work/failures"
