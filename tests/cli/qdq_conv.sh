# qdq_conv.sh - quantized convolutions (DequantizeLinear -> Conv [-> Relu] ->
# QuantizeLinear), which the executor runs on 8-bit integers, against numpy's
# exact integer result (qdq_conv_cases.py), on one thread and on two; and a
# trained quantized model run fused agrees with ONNX Runtime's integer
# convolutions where the float32 chain did not.
. "$ROOT/tests/cli/lib.sh"
"$PY" -c 'import onnx, numpy' 2>/dev/null ||
	fail "$PY cannot import onnx and numpy (make deps installs python3-onnx and python3-numpy)"
"$PY" "$ROOT/tests/cli/qdq_conv_cases.py" "$TEST_TMP/cases" || fail "case generation"
n=$(ls "$TEST_TMP/cases" | wc -l)
[ "$n" -ge 11 ] || fail "expected at least 11 cases, found $n"
for j in 1 2; do
	pn -j "$j" conformance "$TEST_TMP/cases"
	bad=$(printf '%s\n' "$out" | grep -v '^PASS' | grep . || true)
	passed=$(printf '%s\n' "$out" | grep -c '^PASS' || true)
	[ "$passed" -eq "$n" ] || fail "with $j thread(s), $passed of $n cases passed:
$bad"
done
echo "$n cases passed on 1 and 2 threads"
