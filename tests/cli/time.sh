# `passnet time` prints median, IQR, trials and path per model (or JSON
# objects with --json), honours --trials and -j, and a missing file is one
# error line and a non-zero exit.  `passnet run --write-inputs` writes the
# inputs it ran on, so a folder becomes a backend-test set for other
# runtimes (bench/ort.sh relies on it).  Times are only checked to be
# positive and finite: this machine is shared.
. "$ROOT/tests/cli/lib.sh"
need_corpus
PY=${PYTHON:-/usr/bin/python3}
relu=$TESTDATA/node/test_relu
model=$CORPUS/models/gpt2_tiny
[ -d "$relu" ] || fail "no ONNX backend tests at $TESTDATA (make deps installs libonnx-testdata)"

# plain lines: median_ms iqr_ms trials path (default 10 trials)
pn time "$relu" "$model"
[ "$status" -eq 0 ] || fail "time: $out"
expect_eq "$(echo "$out" | wc -l | tr -d ' ')" 2 "one line per model"
echo "$out" | awk -v a="$relu" -v b="$model" '
	NF != 4 { print "fields: " $0; exit 1 }
	!($1 > 0 && $1 < 1e6 && $2 >= 0 && $2 < 1e6) { print "times: " $0; exit 1 }
	$3 != 10 { print "trials: " $0; exit 1 }
	$4 != (NR == 1 ? a : b) { print "path: " $0; exit 1 }' || fail "plain output: $out"

# --json (global or after the command), --trials, --warmup, -j
check_json() {  # check_json TRIALS THREADS NLINES
	echo "$out" | "$PY" -c '
import json, math, sys
trials, threads, n = map(int, sys.argv[1:])
lines = sys.stdin.read().splitlines()
assert len(lines) == n, lines
for l in lines:
    r = json.loads(l)
    assert set(r) == {"path", "median_ms", "iqr_ms", "min_ms", "trials", "threads"}, r
    assert r["trials"] == trials and r["threads"] == threads, r
    for k in ("median_ms", "min_ms"):
        assert math.isfinite(r[k]) and r[k] > 0, r
    assert math.isfinite(r["iqr_ms"]) and r["iqr_ms"] >= 0, r
    assert r["min_ms"] <= r["median_ms"], r
' "$@" || fail "json output: $out"
}
pn --json time --trials 3 --warmup 1 "$relu" "$model"
[ "$status" -eq 0 ] || fail "time --json: $out"
check_json 3 1 2
pn time --json --trials=1 --warmup=0 "$relu"
[ "$status" -eq 0 ] || fail "time --json --trials=1: $out"
check_json 1 1 1
pn -j 2 time --json --trials 2 "$relu"
[ "$status" -eq 0 ] || fail "time -j 2: $out"
check_json 2 2 1
echo "time: plain and JSON output, trials and threads honoured"

# a missing file: one line naming it, exit 1; the other paths still timed
pn time "$TEST_TMP/nope.onnx"
[ "$status" -ne 0 ] || fail "missing file: exit 0"
expect_eq "$(echo "$out" | wc -l | tr -d ' ')" 1 "missing file: one line ($out)"
expect_contains "$out" "nope.onnx" "missing file"
pn time --trials 2 "$TEST_TMP/nope.onnx" "$relu"
[ "$status" -eq 1 ] || fail "missing file among others: status $status"
expect_contains "$out" "2 $relu" "the good path after a missing one"
pn time --trials 0 "$relu"
[ "$status" -eq 2 ] || fail "--trials 0: status $status ($out)"
echo "time: missing files and bad options"

# run --write-inputs: the inputs written are the ones that gave the outputs
mkdir -p "$TEST_TMP/case"
cp "$relu/model.onnx" "$TEST_TMP/case/"
pn run "$TEST_TMP/case" --seed 3 --write-inputs "$TEST_TMP/case/test_data_set_0" \
	--outputs "$TEST_TMP/case/test_data_set_0"
[ "$status" -eq 0 ] || fail "run --write-inputs: $out"
[ -f "$TEST_TMP/case/test_data_set_0/input_0.pb" ] || fail "run --write-inputs wrote no input_0.pb"
pn run "$TEST_TMP/case" --outputs "$TEST_TMP/again"
[ "$status" -eq 0 ] || fail "run on the written test set: $out"
cmp -s "$TEST_TMP/case/test_data_set_0/output_0.pb" "$TEST_TMP/again/output_0.pb" ||
	fail "outputs on the written inputs differ from the first run's"
pn time --trials 2 "$TEST_TMP/case"
[ "$status" -eq 0 ] || fail "time on the written test set: $out"
echo "run --write-inputs: a backend-test set that reproduces the outputs"
