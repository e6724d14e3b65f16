# The weight check runs once for the copies it would give one result
# (extract/weight_memo.h): re-uploads of a model under other versions and
# producers, its weights in the file (compensated.onnx: a real run and a
# corrected one) or its weight file never published (noweights.onnx:
# regenerated blind), reuse the first copy's check, and the store is the
# same bytes as when each copy is checked in a run of its own, in another
# order, or on 2 threads.  Copies whose weights come from a file beside
# them are checked one by one (the file is not in the key).  A blind
# model's re-exports (every value and node renamed, the nodes in another
# order: extract/check_form.h) share its check too: noweights.onnx renamed,
# and a model with branches (branchy) renamed and reordered; and branchy's
# fine-tunes, whose weights in the file moved in their low bits (the blind
# run draws from coarse statistics).
. "$ROOT/tests/cli/lib.sh"
fx="$TEST_TMP/fx"
"$PY" "$ROOT/tests/cli/weights_scale_models.py" "$fx" || fail "fixture"
m="$TEST_TMP/models"
"$PY" - "$fx" "$m" <<'PYEOF' || fail "making the copies"
import os, shutil, sys
import onnx
fx, out = sys.argv[1], sys.argv[2]
for base, name in ((100, "compensated"), (200, "noweights"), (300, "external")):
    src = os.path.join(fx, ("noweights" if name == "external" else name) + ".onnx")
    model = onnx.load(src, load_external_data=False)
    for i in range(3):
        d = os.path.join(out, f"{name}{i}")
        os.makedirs(d)
        model.model_version = base + i
        model.producer_name = f"uploader{i}"
        model.doc_string = f"re-upload {i}"
        onnx.save(model, os.path.join(d, "model.onnx"))
        if name == "external":   # the weight file beside every copy
            shutil.copy(os.path.join(fx, "noweights.data"), d)
PYEOF
"$PY" - "$fx" "$m" <<'PYEOF' || fail "making the re-exports"
import os, sys
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
fx, out = sys.argv[1], sys.argv[2]
rng = np.random.default_rng(7)

w = lambda *s: (rng.standard_normal(s) * 0.3).astype(np.float32)
weights = {"wa": w(8, 3, 3, 3), "wb": w(8, 3, 1, 1), "wc": w(4, 8, 3, 3),
           "bias": w(4), "fc": w(4 * 16 * 16, 5), "shape": np.array([1, -1], np.int64)}

def branchy():
    """Two branches from x joined and reduced (each branch an output too,
    so that another node order numbers the outputs otherwise); every weight over 64 bytes in
    a weight file that is not published, the bias kept in the file."""
    inits = dict(weights)
    nodes = [helper.make_node("Conv", ["x", "wa"], ["a"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["a"], ["ar"]),
             helper.make_node("Conv", ["x", "wb"], ["b"]),
             helper.make_node("Sigmoid", ["b"], ["bs"]),
             helper.make_node("Add", ["ar", "bs"], ["s"]),
             helper.make_node("Conv", ["s", "wc", "bias"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("Tanh", ["c"], ["ct"]),
             helper.make_node("Reshape", ["ct", "shape"], ["flat"]),
             helper.make_node("MatMul", ["flat", "fc"], ["y"])]
    g = helper.make_graph(nodes, "branchy",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 16, 16])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 5]),
                           helper.make_tensor_value_info("ar", TensorProto.FLOAT, [1, 8, 16, 16]),
                           helper.make_tensor_value_info("bs", TensorProto.FLOAT, [1, 8, 16, 16])],
                          [numpy_helper.from_array(a, n) for n, a in inits.items()])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], producer_name="w26")
    m.ir_version = 8
    return m

def reexport(model, tag):
    """Every value and node renamed, the nodes in another topological order
    (the last ready node first), the outputs listed the other way round."""
    g = model.graph
    outputs = list(g.output)[::-1]
    del g.output[:]
    g.output.extend(outputs)
    names = {}
    ren = lambda n: names.setdefault(n, f"{tag}_{len(names)}") if n else n
    for vi in list(g.input) + list(g.output):
        vi.name = ren(vi.name)
    for t in g.initializer:
        t.name = ren(t.name)
    for n in g.node:
        n.input[:] = [ren(x) for x in n.input]
        n.output[:] = [ren(x) for x in n.output]
        n.name = f"{tag}_node{len(names)}"
    made = {i.name for i in g.input} | {t.name for t in g.initializer}
    todo, order = list(g.node), []
    while todo:
        ready = [n for n in todo if all(x in made for x in n.input if x)]
        n = ready[-1]
        todo.remove(n)
        order.append(n)
        made.update(n.output)
    del g.node[:]
    g.node.extend(order)
    model.producer_name = f"exporter-{tag}"
    return model

def finetune(model, seed):
    """The low byte of every element of the weights kept in the file moved."""
    r = np.random.default_rng(seed)
    for t in model.graph.initializer:
        a = numpy_helper.to_array(t)
        if a.dtype == np.float32 and a.size > 16:
            bits = a.view(np.uint32) ^ r.integers(0, 256, a.shape, dtype=np.uint32)
            t.CopyFrom(numpy_helper.from_array(bits.view(np.float32), t.name))
    return model

# branchy: the original, two re-exports and two fine-tunes, the weight file
# (wc and fc; wa and wb stay in the model, with statistics) left out of each
ext = dict(save_as_external_data=True, all_tensors_to_one_file=True, size_threshold=1024)
for name, make in (("branchy0", branchy), ("branchy1", lambda: reexport(branchy(), "b1")),
                   ("branchy2", lambda: reexport(branchy(), "b2")),
                   ("finetuned1", lambda: finetune(branchy(), 1)),
                   ("finetuned2", lambda: finetune(branchy(), 2))):
    d = os.path.join(out, name)
    os.makedirs(d)
    onnx.save(make(), os.path.join(d, "model.onnx"), location="branchy.data", **ext)
    os.remove(os.path.join(d, "branchy.data"))
# noweights renamed twice (a chain: one node order)
for i in range(1, 3):
    d = os.path.join(out, f"renamed{i}")
    os.makedirs(d)
    m = reexport(onnx.load(os.path.join(fx, "noweights.onnx"), load_external_data=False), f"n{i}")
    onnx.save(m, os.path.join(d, "model.onnx"))
PYEOF
[ "$(ls "$m" | wc -l)" -eq 16 ] || fail "16 copies wanted in $m"

# one run, one thread: the first copy of each is checked, the next two reuse
# it (a re-export's record gets its own output names: the store below equals
# the one where each copy is checked alone)
pn --db "$TEST_TMP/one" -j 1 build "$m"
[ "$status" -eq 0 ] || fail "build: $out"
expect_contains "$out" "16 new models" "sixteen models"
expect_contains "$out" "; 10 weight checks reused (the same file less who made it, or the same structure without its weight files, was checked this run)" \
	"the checks reused: 2 of compensated, 4 of noweights (2 re-uploads, 2 renamed), 4 of branchy (2 re-exports, 2 fine-tunes), none of the copies with a weight file"

# each copy new in a run of its own, in another order (the source fills up
# one copy a run): nothing to reuse, the same store
same_apart build "checks reused" "$m" $(ls "$m" | sort -r)

# and the reused check is the check: the corrected model says so on each copy
for i in 0 1 2; do
	pn --db "$TEST_TMP/one" show "$(key_of "$TEST_TMP/one" "compensated$i/model.onnx")"
	expect_contains "$out" "outputs within 10x of the real run: yes after" "compensated$i: corrected"
	pn --db "$TEST_TMP/one" show "$(key_of "$TEST_TMP/one" "noweights$i/model.onnx")"
	expect_contains "$out" "outputs finite and normal: yes" "noweights$i: the blind check"
	pn --db "$TEST_TMP/one" show "$(key_of "$TEST_TMP/one" "external$i/model.onnx")"
	expect_contains "$out" "outputs within 10x of the real run: yes" "external$i: checked with its weight file"
	pn --db "$TEST_TMP/one" show "$(key_of "$TEST_TMP/one" "branchy$i/model.onnx")"
	expect_contains "$out" "outputs finite and normal: yes" "branchy$i: the blind check"
done
echo "weights_memo: ok"
