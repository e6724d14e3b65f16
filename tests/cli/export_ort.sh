# Every variant of an exported task set runs on ONNX Runtime (onnxruntime-node
# from npm, CPU, 1 thread) and ORT's outputs match the exported output_N.pb
# under the ES_t ladder of the variant's dtype: float32 at level t = -3
# (rtol 10^(5.886 * -3 / 5), about 2.9e-4, atol 10^-3), float16 and bfloat16
# at level -2 (float16: rtol 10^(3 * -2 / 5), about 0.063, atol 10^-2;
# bfloat16: rtol 10^(1.796 * -2 / 5), about 0.19, atol 10^-2): the narrow
# dtypes round after every op, where ORT and passnet may round differently.
# ORT lacks CPU kernels for many float16 and most bfloat16 ops, and
# onnxruntime-node has no bfloat16 tensors: such variants ("Could not find
# an implementation", NOT_IMPLEMENTED, an unsupported data type) are counted
# and listed apart; every other variant must agree, or differ only where
# tests/cli/ort_explain.py explains each differing element (one step of a
# quantiser, one unit of a float-to-integer Cast).
. "$ROOT/tests/cli/lib.sh"
need_corpus
need_ort_node
db="$TEST_TMP/db"
pn --db "$db" build "$CORPUS/zoo" "$CORPUS/models/resnet18" "$CORPUS/models/mobilenet_v3_small"
[ "$status" -eq 0 ] || fail "build: $out"
pn --db "$db" exec --strategy fusion --min-nodes 2 --limit 200 --warmup 1 --trials 3
[ "$status" -eq 0 ] || fail "exec: $out"
pn --db "$db" export --out "$TEST_TMP/set" --tasks 40
[ "$status" -eq 0 ] || fail "export: $out"
echo "$out"
# ort_group NAME LEVEL SCALE DIR...: runs DIRs at level LEVEL of the ladder
# with rtol exponent scale SCALE; appends to $TEST_TMP/ort.jsonl
ort_group() {
	name=$1 level=$2 scale=$3
	shift 3
	[ $# -gt 0 ] || return 0
	rtol=$(awk -v t="$level" -v s="$scale" 'BEGIN { printf "%.6g", 10 ^ (s * t / 5) }')
	atol=$(awk -v t="$level" 'BEGIN { printf "%.6g", 10 ^ t }')
	echo "$name: $# variants at rtol $rtol, atol $atol"
	node "$ROOT/bench/ort/time.js" --trials 1 --warmup 0 --no-profile --save-outputs --rtol "$rtol" \
		--atol "$atol" --json "$@" > "$TEST_TMP/group.jsonl" || true
	cat "$TEST_TMP/group.jsonl" >> "$TEST_TMP/ort.jsonl"
	# a disagreement must be explained element by element by
	# ort_explain.py (one quantisation step, or one unit of an integer Cast
	# of a float); the explained variants are listed apart
	grep '"agree":false' "$TEST_TMP/group.jsonl" | sed 's/^{"path":"\([^"]*\)".*/\1/' > "$TEST_TMP/group.disagree" || true
	[ -s "$TEST_TMP/group.disagree" ] || return 0
	# ORT again without graph optimisations, for ort_explain.py's rule 4
	# (ORT's integer fusion of quantised graphs differs from ORT unfused)
	xargs node "$ROOT/bench/ort/time.js" --level disabled --trials 1 --warmup 0 --no-profile \
		--save-outputs --json < "$TEST_TMP/group.disagree" > /dev/null 2>&1 || true
	xargs "$PY" "$ROOT/tests/cli/ort_explain.py" --rtol "$rtol" --atol "$atol" < "$TEST_TMP/group.disagree" \
		>> "$TEST_TMP/explain.jsonl" || true
}
: > "$TEST_TMP/ort.jsonl"
: > "$TEST_TMP/explain.jsonl"
set -- $(ls -d "$TEST_TMP"/set/tasks/*/v*/ | grep -v -e '-f16/$' -e '-bf16/$')
ort_group float32 -3 5.886 "$@"
set -- $(ls -d "$TEST_TMP"/set/tasks/*/v*-f16/ 2>/dev/null)
ort_group float16 -2 3 "$@"
set -- $(ls -d "$TEST_TMP"/set/tasks/*/v*-bf16/ 2>/dev/null)
ort_group bfloat16 -2 1.796 "$@"
n=$(ls -d "$TEST_TMP"/set/tasks/*/v*/ | wc -l)
[ "$(wc -l < "$TEST_TMP/ort.jsonl")" -eq "$n" ] || fail "time.js gave $(wc -l < "$TEST_TMP/ort.jsonl") records for $n variants"
nokernel_re='Could not find an implementation|NOT_IMPLEMENTED|Unsupported data type|Unsupported tensor type'
for d in f32 f16 bf16; do
	if [ "$d" = f32 ]; then
		recs=$(grep -v -e '-f16/"' -e '-bf16/"' "$TEST_TMP/ort.jsonl" || true)
	else
		recs=$(grep -e "-$d/\"" "$TEST_TMP/ort.jsonl" || true)
	fi
	[ -n "$recs" ] || continue
	all=$(echo "$recs" | wc -l)
	agree=$(echo "$recs" | grep -c '"agree":true' || true)
	nok=$(echo "$recs" | grep -v '"agree":true' | grep -c -E "$nokernel_re" || true)
	echo "$d: $all variants, $agree agree with ORT, $nok without ORT kernels"
done
echo "without ORT kernels:"
grep -E "$nokernel_re" "$TEST_TMP/ort.jsonl" | sed 's/.*"error":"\([^"]*\)".*/\1/' | sort | uniq -c | sort -rn | head -10
explained=$(grep '"explained": true' "$TEST_TMP/explain.jsonl" | sed 's/^{"path": "\([^"]*\)".*/\1/' || true)
if [ -n "$explained" ]; then
	echo "disagree, explained by ort_explain.py:"
	grep '"explained": true' "$TEST_TMP/explain.jsonl"
fi
bad=$(grep -v '"agree":true' "$TEST_TMP/ort.jsonl" | grep -v -E "$nokernel_re" |
	grep -v -F "$(printf '%s\n' "$explained" | sed 's/.*/"path":"&"/')" || true)
[ -z "$bad" ] || { echo "$bad" | head -5; fail "$(echo "$bad" | wc -l) variants disagree with ONNX Runtime or do not run there"; }
f32_agree=$(grep -v -e '-f16/"' -e '-bf16/"' "$TEST_TMP/ort.jsonl" | grep -c -e '"agree":true' \
	$(printf '%s\n' "$explained" | grep -v -e '-f16/$' -e '-bf16/$' | sed 's/.*/-e "path":"&"/') || true)
f32_all=$(grep -v -e '-f16/"' -e '-bf16/"' "$TEST_TMP/ort.jsonl" | wc -l)
[ "$f32_agree" -eq "$f32_all" ] || fail "a float32 variant does not run on ORT"
