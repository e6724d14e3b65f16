# bench/ort/cases.sh - what bench/ort.sh and bench/ort_models.sh share,
# sourced by both from the checkout's root with $work set:
#   ort_setup            ORT's CPU library from the npm package into $ort_lib,
#                        build/bench/ort_time built
#   case_inputs DIR NAME DIR/model.onnx's test_data_set_0: passnet's seeded
#                        inputs (seed 1) and its outputs; on failure a line
#                        "NAME<TAB>passnet run failed<TAB>why" in
#                        $work/failures, DIR removed, status 1
#   time_cases RTOL ATOL OUT
#                        every folder of $work/case_list timed by `passnet
#                        -j1 time` ($PASSNET, default bin/passnet) into
#                        $work/passnet.jsonl, then by ORT's C API (outputs
#                        compared within RTOL, ATOL) into $work/OUT; TRIALS
#                        timed runs after WARMUP

ort_setup() {
	# The CPU build of ORT ships inside the npm package; the install script
	# only fetches GPU providers, so skipping it needs no network beyond the
	# registry.
	if [ ! -d bench/ort/node_modules/onnxruntime-node ]; then
		(cd bench/ort && ONNXRUNTIME_NODE_INSTALL=skip npm ci --no-audit --no-fund >&2)
	fi
	ort_lib=$(ls bench/ort/node_modules/onnxruntime-node/bin/napi-v*/linux/x64/libonnxruntime.so.1 | head -n 1)
	[ -f build/bench/ort_time ] || make --no-print-directory build/bench/ort_time >&2
}

case_inputs() {
	if ! case_msg=$(bin/passnet run "$1" --seed 1 --write-inputs "$1/test_data_set_0" \
		--outputs "$1/test_data_set_0" 2>&1 >/dev/null); then
		printf 'passnet run failed\t%s\t%s\n' "$2" "$(echo "$case_msg" | tail -n 1)" >> "$work/failures"
		rm -rf "$1"
		return 1
	fi
}

time_cases() {
	# shellcheck disable=SC2046
	"${PASSNET:-bin/passnet}" -j1 --json time --trials "$TRIALS" --warmup "$WARMUP" \
		$(cat "$work/case_list") > "$work/passnet.jsonl" 2> "$work/passnet.err" || true
	# shellcheck disable=SC2046
	build/bench/ort_time --lib "$ort_lib" --trials "$TRIALS" --warmup "$WARMUP" --rtol "$1" \
		--atol "$2" $(cat "$work/case_list") > "$work/$3" 2> "$work/${3%.jsonl}.err" || true
}
