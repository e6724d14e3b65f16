# Every variant of an exported task set runs on ONNX Runtime (onnxruntime-node
# from npm, CPU, 1 thread) and ORT's outputs match the exported output_N.pb
# under the float32 tolerance of ES_t level t = -3: rtol 10^(5.886 * -3 / 5)
# (about 2.9e-4) and atol 10^-3.
. "$ROOT/tests/cli/lib.sh"
need_corpus
command -v node >/dev/null || fail "node is not installed (make deps installs it)"
if [ ! -d "$ROOT/bench/ort/node_modules/onnxruntime-node" ]; then
	(cd "$ROOT/bench/ort" && ONNXRUNTIME_NODE_INSTALL=skip npm ci --no-audit --no-fund >/dev/null 2>&1) ||
		fail "npm ci of onnxruntime-node failed"
fi
db="$TEST_TMP/db"
pn --db "$db" build "$CORPUS/zoo" "$CORPUS/models/resnet18" "$CORPUS/models/mobilenet_v3_small"
[ "$status" -eq 0 ] || fail "build: $out"
pn --db "$db" exec --strategy fusion --min-nodes 2 --limit 200 --warmup 1 --trials 3
[ "$status" -eq 0 ] || fail "exec: $out"
pn --db "$db" export --out "$TEST_TMP/set" --tasks 40
[ "$status" -eq 0 ] || fail "export: $out"
echo "$out"
rtol=$(awk 'BEGIN { printf "%.6g", 10 ^ (5.886 * -3 / 5) }')
node "$ROOT/bench/ort/time.js" --trials 1 --warmup 0 --no-profile --rtol "$rtol" --atol 1e-3 --json \
	"$TEST_TMP"/set/tasks/*/v*/ > "$TEST_TMP/ort.jsonl" || true
n=$(ls -d "$TEST_TMP"/set/tasks/*/v*/ | wc -l)
agree=$(grep -c '"agree":true' "$TEST_TMP/ort.jsonl" || true)
echo "ORT ran $n variants; $agree agree with the exported outputs (rtol $rtol, atol 1e-3)"
grep -v '"agree":true' "$TEST_TMP/ort.jsonl" | head -5
[ "$agree" -eq "$n" ] || fail "$((n - agree)) variants disagree with ONNX Runtime or do not run there"
