# qdq_chains.sh - the quantized chains the executor runs as one kernel
# (runtime/fuse.h): convolutions (DequantizeLinear -> Conv [-> Relu] ->
# QuantizeLinear) on 8-bit integers against numpy's exact integer result,
# residual joins (DequantizeLinear + DequantizeLinear [-> Relu] ->
# QuantizeLinear) against numpy's float32 operations bit for bit, and chains
# whose operands the kernels do not take, run node by node
# (qdq_chains_cases.py); on one thread and on two.
. "$ROOT/tests/cli/lib.sh"
"$PY" -c 'import onnx, numpy' 2>/dev/null ||
	fail "$PY cannot import onnx and numpy (make deps installs python3-onnx and python3-numpy)"
"$PY" "$ROOT/tests/cli/qdq_chains_cases.py" "$TEST_TMP/cases" || fail "case generation"
n=$(ls "$TEST_TMP/cases" | wc -l)
[ "$n" -ge 22 ] || fail "expected at least 22 cases, found $n"
for j in 1 2; do
	pn -j "$j" conformance "$TEST_TMP/cases"
	bad=$(printf '%s\n' "$out" | grep -v '^PASS' | grep . || true)
	passed=$(printf '%s\n' "$out" | grep -c '^PASS' || true)
	[ "$passed" -eq "$n" ] || fail "with $j thread(s), $passed of $n cases passed:
$bad"
done
echo "$n cases passed on 1 and 2 threads"
