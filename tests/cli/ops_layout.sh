# ops_layout.sh - the layout, index and generator kernels on cases generated
# by ops_layout_cases.py (opset-18 behaviour, old opsets, strings, negative
# steps, multi-threaded sizes), on one thread and on two.
. "$ROOT/tests/cli/lib.sh"
PY=${PYTHON:-/usr/bin/python3}
"$PY" -c 'import onnx, numpy' 2>/dev/null ||
	fail "$PY cannot import onnx and numpy (make deps installs python3-onnx and python3-numpy)"
"$PY" "$ROOT/tests/cli/ops_layout_cases.py" "$TEST_TMP/cases" || fail "case generation"
for j in 1 2; do
	pn -j "$j" conformance "$TEST_TMP/cases"
	bad=$(printf '%s\n' "$out" | grep '^FAIL' || true)
	[ -z "$bad" ] || fail "cases failed with $j thread(s):
$bad"
done
passed=$(printf '%s\n' "$out" | grep -c '^PASS' || true)
[ "$passed" -ge 70 ] || fail "expected at least 70 cases, got: $out"
echo "$passed passed"
