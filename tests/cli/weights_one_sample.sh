# A blind weight check of a model fixed at a batch B > 1 runs one sample
# (extract/generalize.h, pn_generalize_one): the model published at batch
# 4, and renamed at batch 8, both without their weight file, are checked
# as the batch-1 model they were made from, so the run's memo answers them
# with its check; a model that spells its batch in a Reshape target is not
# such a copy and runs at its batch.  The store is the same bytes when each
# model is new in a run of its own (the batch-4 model first: its one
# sample runs, and answers the batch-1 model), and on 2 threads.
. "$ROOT/tests/cli/lib.sh"
m="$TEST_TMP/models"
"$PY" - "$m" <<'PYEOF' || fail "making the models"
import os, sys
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
out = sys.argv[1]
rng = np.random.default_rng(5)
w = lambda *s: (rng.standard_normal(s) * 0.3).astype(np.float32)
weights = {"w1": w(16, 3, 3, 3), "b1": w(16), "w2": w(8, 16, 3, 3), "fc": w(8, 5), "fb": w(5)}

def model(batch, prefix="", spelled=False):
    """Two convolutions and a head, every weight over 1 KiB in a weight
    file that is not published; prefix renames every value."""
    p = lambda n: prefix + n
    inits = [numpy_helper.from_array(a, p(n)) for n, a in weights.items()]
    flat = [helper.make_node("Flatten", [p("a")], [p("f")])]
    if spelled:
        inits.append(numpy_helper.from_array(np.array([batch, -1], np.int64), p("t")))
        flat = [helper.make_node("Reshape", [p("a"), p("t")], [p("f")])]
    nodes = [helper.make_node("Conv", [p("x"), p("w1"), p("b1")], [p("c1")], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", [p("c1")], [p("r1")]),
             helper.make_node("Conv", [p("r1"), p("w2")], [p("c2")], pads=[1, 1, 1, 1]),
             helper.make_node("Sigmoid", [p("c2")], [p("g")]),
             helper.make_node("GlobalAveragePool", [p("g")], [p("a")])] + flat + \
            [helper.make_node("Gemm", [p("f"), p("fc"), p("fb")], [p("y")])]
    g = helper.make_graph(nodes, "net",
                          [helper.make_tensor_value_info(p("x"), TensorProto.FLOAT, [batch, 3, 12, 12])],
                          [helper.make_tensor_value_info(p("y"), TensorProto.FLOAT, [batch, 5])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], producer_name="w28")
    m.ir_version = 8
    return m

ext = dict(save_as_external_data=True, all_tensors_to_one_file=True, size_threshold=1024)
for name, mk in (("a_batch1", lambda: model(1)), ("b_batch4", lambda: model(4)),
                 ("c_batch8_renamed", lambda: model(8, "r_")),
                 ("d_spelled4", lambda: model(4, spelled=True))):
    d = os.path.join(out, name)
    os.makedirs(d)
    onnx.save(mk(), os.path.join(d, "model.onnx"), location="net.data", **ext)
    os.remove(os.path.join(d, "net.data"))
PYEOF
[ "$(ls "$m" | wc -l)" -eq 4 ] || fail "4 models wanted in $m"

pn --db "$TEST_TMP/one" -j 1 build "$m"
[ "$status" -eq 0 ] || fail "build: $out"
expect_contains "$out" "4 new models" "four models"
expect_contains "$out" "; 2 weight checks reused" \
	"the batch-4 and batch-8 models answered by the batch-1 model's check"
pn --db "$TEST_TMP/one" show "$(key_of "$TEST_TMP/one" a_batch1/model.onnx)"
expect_contains "$out" "outputs finite and normal: yes" "a_batch1: the blind check passed"
case $out in *"one sample"*) fail "a batch-1 model said it ran one sample: $out" ;; esac
for d in b_batch4:4 c_batch8_renamed:8; do
	pn --db "$TEST_TMP/one" show "$(key_of "$TEST_TMP/one" "${d%:*}/model.onnx")"
	expect_contains "$out" "outputs finite and normal: yes" "${d%:*}: the blind check passed"
	expect_contains "$out" "(one sample of a batch of ${d#*:})" "${d%:*}: one sample checked"
done
pn --db "$TEST_TMP/one" show "$(key_of "$TEST_TMP/one" d_spelled4/model.onnx)"
expect_contains "$out" "outputs finite and normal: yes" "d_spelled4: the blind check passed"
case $out in *"one sample"*) fail "a model spelling its batch ran one sample: $out" ;; esac

# each model new in a run of its own, the batch-4 model first
same_apart build "weight checks reused" "$m" b_batch4 a_batch1 c_batch8_renamed d_spelled4
echo "weights_one_sample: ok"
