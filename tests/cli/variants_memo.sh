# The generalized batch variants of a model are chosen once for the copies
# that share its file key (extract/variant_memo.h): a fine-tune whose
# weights moved below their coarse statistics takes the model's variants
# and notes; a renamed copy has another key and chooses its own, the same
# ones, but takes the model's batch independence verdict, which is kept by
# the canonical form (variant_memo.h).  The store is the same bytes when
# each model is new in a run of its own (the fine-tune first), and on 2
# threads.
. "$ROOT/tests/cli/lib.sh"
m="$TEST_TMP/models"
"$PY" - "$m" <<'PYEOF' || fail "making the models"
import os, sys
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
out = sys.argv[1]
rng = np.random.default_rng(7)
w = lambda *s: (rng.standard_normal(s) * 0.3).astype(np.float32)
weights = {"w1": w(16, 3, 3, 3), "b1": w(16), "w2": w(8, 16, 3, 3), "fc": w(5, 8), "fb": w(5)}

def model(prefix="", tune=False):
    """Two convolutions and a head at batch 1; tune flips the lowest bit
    of every element of the weights kept as statistics."""
    p = lambda n: prefix + n
    inits = []
    for n, a in weights.items():
        if tune and a.size > 64:
            a = (a.view(np.int32) ^ 1).view(np.float32)
        inits.append(numpy_helper.from_array(a, p(n)))
    nodes = [helper.make_node("Conv", [p("x"), p("w1"), p("b1")], [p("c1")], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", [p("c1")], [p("r1")]),
             helper.make_node("Conv", [p("r1"), p("w2")], [p("c2")], pads=[1, 1, 1, 1]),
             helper.make_node("GlobalAveragePool", [p("c2")], [p("a")]),
             helper.make_node("Flatten", [p("a")], [p("f")]),
             helper.make_node("Gemm", [p("f"), p("fc"), p("fb")], [p("y")], transB=1)]
    g = helper.make_graph(nodes, "net",
                          [helper.make_tensor_value_info(p("x"), TensorProto.FLOAT, [1, 3, 10, 10])],
                          [helper.make_tensor_value_info(p("y"), TensorProto.FLOAT, [1, 5])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], producer_name="w29")
    m.ir_version = 8
    return m

for name, mk in (("a_model", lambda: model()), ("b_finetune", lambda: model(tune=True)),
                 ("c_renamed", lambda: model("r_"))):
    d = os.path.join(out, name)
    os.makedirs(d)
    onnx.save(mk(), os.path.join(d, "model.onnx"))
PYEOF
[ "$(ls "$m" | wc -l)" -eq 3 ] || fail "3 models wanted in $m"

pn --db "$TEST_TMP/one" -j 1 extract "$m"
[ "$status" -eq 0 ] || fail "extract: $out"
expect_contains "$out" "3 new models" "three models"
expect_contains "$out" "; 1 models' shape variants reused" "the fine-tune took the model's variants"
expect_contains "$out" "; 1 batch independence checks reused" \
	"the renamed copy took the model's independence verdict"
pn --db "$TEST_TMP/one" ls --variants
variants=$out
for d in a_model b_finetune c_renamed; do
	n=$(echo "$variants" | grep -c "variant [0-9]* of .*$d/model.onnx")
	[ "$n" -ge 2 ] || fail "$d: generalized batch variants wanted, got $n in: $variants"
done
[ "$(echo "$variants" | grep -c "variant [0-9]* of .*a_model/model.onnx")" -eq \
  "$(echo "$variants" | grep -c "variant [0-9]* of .*b_finetune/model.onnx")" ] ||
	fail "the fine-tune has other variants than its model: $variants"

# each model new in a run of its own, the fine-tune first: nothing reused
same_apart extract "reused" "$m" b_finetune c_renamed a_model
echo "variants_memo: ok"
