# run_cap.sh - extract makes no run it estimates above PN_RUN_MAX_BYTES
# (extract/run_gate.h, 1 GiB): a fixed-shape model whose tensors hold 1 GiB
# each (a 64 x 2048 x 2048 float32 input through Relu and Neg) is stored,
# its binding taken from inference, its weight check and its batch
# generalization recorded as not run with their sizes, and the build never
# holds that memory; the same model at a small shape is run as before.
. "$ROOT/tests/cli/lib.sh"
mk() {
	"$PY" - "$1" "$2" <<'PY'
import sys, onnx
from onnx import helper as h, TensorProto as TP
path, side = sys.argv[1], int(sys.argv[2])
g = h.make_graph([h.make_node('Relu', ['x'], ['r']), h.make_node('Neg', ['r'], ['y'])], 'big',
                 [h.make_tensor_value_info('x', TP.FLOAT, [1, 64, side, side])],
                 [h.make_tensor_value_info('y', TP.FLOAT, [1, 64, side, side])])
m = h.make_model(g, opset_imports=[h.make_opsetid('', 13)])
onnx.checker.check_model(m)
onnx.save(m, path)
PY
}
mkdir -p "$TEST_TMP/m"
mk "$TEST_TMP/m/big.onnx" 2048 || fail "fixture"
mk "$TEST_TMP/m/small.onnx" 32 || fail "fixture"
db="$TEST_TMP/db"
set +e
/usr/bin/time -f '%M' -o "$TEST_TMP/rss" "$PASSNET" --db "$db" -j 1 extract "$TEST_TMP/m" \
	> "$TEST_TMP/out" 2>&1
status=$?
set -e
[ "$status" -eq 0 ] || fail "extract: $(cat "$TEST_TMP/out")"
rss_kb=$(cat "$TEST_TMP/rss")
# the run would have held 2 GiB (and more for the weight check's runs)
[ "$rss_kb" -lt 700000 ] || fail "extract peaked at $rss_kb KiB: the 2 GiB run was made"

pn --db "$db" show "$(key_of "$db" big.onnx)"
[ "$status" -eq 0 ] || fail "show big: $out"
expect_contains "$out" "check    not run: it would hold about 3072 MiB, over the 1024 MiB a run may" \
	"the big model's weight check (input and two activations)"
expect_contains "$out" "batch not generalized: not run: it would hold about" \
	"the big model's batch-independence runs"
expect_contains "$out" "status     ok" "the big model is stored"
pn --db "$db" show "$(key_of "$db" small.onnx)"
[ "$status" -eq 0 ] || fail "show small: $out"
case "$out" in *"not run"*) fail "the small model was not run: $out" ;; esac
echo "big model stored unrun (peak $rss_kb KiB), small one run"
