# A blind weight check whose outputs another check's run computed takes
# them from that run (extract/value_keys.h): cuts of a model published
# without its weight file, each its first k nodes with the values the rest
# read made outputs, are answered by the whole model's run; a cut whose
# first layer reads another weight shape, and the whole model at another
# input size, compute other values and run.  The store is the same bytes
# as when each model is checked in a run of its own (nothing to answer
# from), in the other order, and on 2 threads.
. "$ROOT/tests/cli/lib.sh"
m="$TEST_TMP/models"
"$PY" - "$m" <<'PYEOF' || fail "making the models"
import os, sys
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper, shape_inference
out = sys.argv[1]
rng = np.random.default_rng(11)
w = lambda *s: (rng.standard_normal(s) * 0.3).astype(np.float32)

weights = {"w1": w(16, 3, 3, 3), "b1": w(16), "w2": w(8, 16, 3, 3), "b2": w(8),
           "w3": w(8, 8, 3, 3), "fc": w(8, 5), "fb": w(5)}

def whole(size=16, first=(16, 3, 3, 3)):
    """A chain of convolutions and a head; every weight over 1 KiB in a
    weight file that is not published (the small biases stay)."""
    inits = dict(weights)
    if first != (16, 3, 3, 3):
        inits["w1"] = w(*first)
    nodes = [helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c1"], ["r1"]),
             helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c2"], ["r2"]),
             helper.make_node("Conv", ["r2", "w3"], ["c3"], pads=[1, 1, 1, 1]),
             helper.make_node("Add", ["c3", "r2"], ["s"]),
             helper.make_node("Sigmoid", ["s"], ["g"]),
             helper.make_node("GlobalAveragePool", ["g"], ["p"]),
             helper.make_node("Flatten", ["p"], ["f"]),
             helper.make_node("Gemm", ["f", "fc", "fb"], ["y"])]
    g = helper.make_graph(nodes, "chain",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, size, size])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 5])],
                          [numpy_helper.from_array(a, n) for n, a in inits.items()])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], producer_name="w27")
    m.ir_version = 8
    return m

def cut(model, k):
    """The first k nodes; what the dropped nodes read, and the kept
    outputs, become the outputs (typed by ONNX's shape inference)."""
    g = model.graph
    kept, dropped = list(g.node[:k]), list(g.node[k:])
    made = {o for n in kept for o in n.output}
    frontier = [v for n in dropped for v in n.input if v in made]
    frontier += [o.name for o in g.output if o.name in made]
    names = list(dict.fromkeys(frontier))
    used = {v for n in kept for v in n.input}
    inits = [t for t in g.initializer if t.name in used]
    del g.node[:]
    g.node.extend(kept)
    del g.initializer[:]
    g.initializer.extend(inits)
    del g.output[:]
    inferred = shape_inference.infer_shapes(model).graph.value_info
    types = {vi.name: vi for vi in inferred}
    g.output.extend(types[n] for n in names)
    return model

ext = dict(save_as_external_data=True, all_tensors_to_one_file=True, size_threshold=1024)
for name, make in (("a_whole", whole), ("b_cut2", lambda: cut(whole(), 2)),
                   ("c_cut4", lambda: cut(whole(), 4)), ("d_cut7", lambda: cut(whole(), 7)),
                   ("e_other_first", lambda: cut(whole(first=(16, 3, 5, 5)), 4)),
                   ("f_bigger", lambda: whole(size=24))):
    d = os.path.join(out, name)
    os.makedirs(d)
    model = make()
    model.model_version = len(name)
    onnx.save(model, os.path.join(d, "model.onnx"), location="chain.data", **ext)
    os.remove(os.path.join(d, "chain.data"))   # every model has a weight over 1 KiB
PYEOF
[ "$(ls "$m" | wc -l)" -eq 6 ] || fail "6 models wanted in $m"

# one run, one thread, the whole model first: its run answers the three
# cuts; the other first layer and the other input size run
pn --db "$TEST_TMP/one" -j 1 build "$m"
[ "$status" -eq 0 ] || fail "build: $out"
expect_contains "$out" "6 new models" "six models"
expect_contains "$out" "; 3 blind weight checks answered by another model's run" \
	"the three cuts answered by the whole model's run"
for d in a_whole b_cut2 c_cut4 d_cut7 e_other_first f_bigger; do
	pn --db "$TEST_TMP/one" show "$(key_of "$TEST_TMP/one" "$d/model.onnx")"
	expect_contains "$out" "outputs finite and normal: yes" "$d: the blind check passed"
done

# each model new in a run of its own, the cuts first: nothing to answer
# from, the same store
same_apart build "answered by another" "$m" $(ls "$m" | sort -r)
echo "weights_book: ok"
