# A subgraph's weights are regenerated on the scale of a model that holds
# it, not blind: the ranges phase stores the statistics of each weight a
# cut holds (InputRanges.weights, from the least model, like its shapes),
# and profile, export and export-onnx draw from them.  The models, made
# here, are log-mel front ends (power spectrum -> MatMul by a non-negative
# filterbank -> Clip at 1e-10 -> Log), as in openWakeWord's melspectrogram:
# drawn blind, the filterbank has negative entries, the Clip floor is 0 in
# float16 and Log gives -inf, so export left the float16 variants out.
#  1. the exported filterbank of every task is the model's: non-negative,
#     its mean within 10x of the real one (the blind draw's is near 0);
#  2. no float16 variant is left out for overflow;
#  3. two models that share the cuts with other filterbanks give the same
#     ranges table in either order (the statistics of the least model).
. "$ROOT/tests/cli/lib.sh"
fx="$TEST_TMP/fx"
"$PY" - "$fx" <<'PYEOF' || fail "making the models"
import os, sys
import numpy as np
import onnx
from onnx import helper as h, TensorProto as T, numpy_helper as nh
out = sys.argv[1]
os.makedirs(out, exist_ok=True)
def filterbank(bins, mels, gain):
    """Triangular filters over the bins: non-negative, mostly zeros."""
    w = np.zeros((bins, mels), np.float32)
    centres = np.linspace(0, bins - 1, mels + 2)
    for m in range(mels):
        lo, c, hi = centres[m], centres[m + 1], centres[m + 2]
        for b in range(bins):
            if lo < b <= c:
                w[b, m] = (b - lo) / (c - lo)
            elif c < b < hi:
                w[b, m] = (hi - b) / (hi - c)
    return w * gain
for name, gain in (("melA", 1.0), ("melB", 3.0)):
    w = filterbank(64, 40, gain)
    np.save(os.path.join(out, name + ".npy"), w)
    g = h.make_graph([
        h.make_node("Mul", ["spec", "spec"], ["power"]),
        h.make_node("MatMul", ["power", "fb"], ["mel"]),
        h.make_node("Clip", ["mel", "floor"], ["clipped"]),
        h.make_node("Log", ["clipped"], ["logmel"]),
        h.make_node("Mul", ["logmel", "k"], ["y"])],
        name,
        [h.make_tensor_value_info("spec", T.FLOAT, [1, 50, 64])],
        [h.make_tensor_value_info("y", T.FLOAT, [1, 50, 40])],
        [nh.from_array(w, "fb"), nh.from_array(np.array(1e-10, np.float32), "floor"),
         nh.from_array(np.array(0.1, np.float32), "k")])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)], producer_name="weights_subgraph.sh")
    m.ir_version = 8
    onnx.checker.check_model(m)
    onnx.save(m, os.path.join(out, name + ".onnx"))
PYEOF

# 1 and 2: one model, built, profiled and exported with float16 variants
db="$TEST_TMP/db" set="$TEST_TMP/set"
pn --db "$db" build "$fx/melA.onnx"
[ "$status" -eq 0 ] || fail "build: $out"
pn --db "$db" exec --warmup 1 --trials 3
[ "$status" -eq 0 ] || fail "exec: $out"
pn --db "$db" export --out "$set" --tasks 50 --variants 4
[ "$status" -eq 0 ] || fail "export: $out"
printf '%s\n' "$out"
"$PY" - "$set" "$fx/melA.npy" <<'PYEOF' || fail "the exported filterbanks"
import glob, json, os, sys
import numpy as np
import onnx
from onnx import numpy_helper as nh
real = np.load(sys.argv[2])
seen = 0
for path in sorted(glob.glob(os.path.join(sys.argv[1], "tasks", "*", "*", "model.onnx"))):
    m = onnx.load(path)
    for t in m.graph.initializer:
        if list(t.dims) != [64, 40] or t.data_type != onnx.TensorProto.FLOAT:
            continue
        w = nh.to_array(t)
        seen += 1
        assert w.min() >= 0, "%s: filterbank drawn below 0 (min %g)" % (path, w.min())
        ratio = w.mean() / real.mean()
        assert 0.1 <= ratio <= 10, "%s: mean %g, the model's %g" % (path, w.mean(), real.mean())
assert seen, "no exported task holds the filterbank"
left = open(os.path.join(sys.argv[1], "left_out.tsv")).read().splitlines()[1:]
over = [l for l in left if "\tfloat16-overflow\t" in l]
assert not over, "float16 variants left out for overflow: %s" % over
f16 = glob.glob(os.path.join(sys.argv[1], "tasks", "*", "*-f16", "model.onnx"))
with_fb = [p for p in f16 if any(list(t.dims) == [64, 40] for t in onnx.load(p).graph.initializer)]
assert with_fb, "no float16 variant holds the filterbank"
print("filterbank in %d exported models, non-negative at the model's mean; %d float16 variants hold it" % (seen, len(with_fb)))
PYEOF
# export-onnx draws the same way: the filterbank of a subgraph holding it
hashes=$("$PY" - "$set" <<'PYEOF'
import glob, json, os, sys
import onnx
for tj in sorted(glob.glob(os.path.join(sys.argv[1], "tasks", "*", "task.json"))):
    for v in json.load(open(tj))["variants"]:
        m = onnx.load(os.path.join(os.path.dirname(tj), v["name"], "model.onnx"))
        if v["dtype"] == "float32" and any(list(t.dims) == [64, 40] for t in m.graph.initializer):
            print(v["hash"])
PYEOF
)
[ -n "$hashes" ] || fail "no float32 variant holds the filterbank"
pn --db "$db" export-onnx --out-dir "$TEST_TMP/one" $hashes
[ "$status" -eq 0 ] || fail "export-onnx: $out"
"$PY" - "$fx/melA.npy" "$TEST_TMP"/one/*.onnx <<'PYEOF' || fail "export-onnx's filterbank"
import sys
import numpy as np
import onnx
from onnx import numpy_helper as nh
real = np.load(sys.argv[1])
for path in sys.argv[2:]:
    w = [nh.to_array(t) for t in onnx.load(path).graph.initializer if list(t.dims) == [64, 40]][0]
    assert w.min() >= 0 and 0.1 <= w.mean() / real.mean() <= 10, (path, w.min(), w.mean(), real.mean())
print("export-onnx: %d subgraphs, filterbanks on the model's scale" % (len(sys.argv) - 2))
PYEOF

# 3: the statistics of the least model, whatever the order
pn --db "$TEST_TMP/ab" build "$fx/melA.onnx" "$fx/melB.onnx"
[ "$status" -eq 0 ] || fail "build ab: $out"
pn --db "$TEST_TMP/ab" exec --ranges-only
[ "$status" -eq 0 ] || fail "ranges ab: $out"
pn --db "$TEST_TMP/ba" build "$fx/melB.onnx"
[ "$status" -eq 0 ] || fail "build b: $out"
pn --db "$TEST_TMP/ba" exec --ranges-only
[ "$status" -eq 0 ] || fail "ranges b: $out"
pn --db "$TEST_TMP/ba" build "$fx/melA.onnx"
[ "$status" -eq 0 ] || fail "build a after b: $out"
pn --db "$TEST_TMP/ba" exec --ranges-only
[ "$status" -eq 0 ] || fail "ranges a after b: $out"
dump "$TEST_TMP/ab" "$TEST_TMP/ab.dump"
dump "$TEST_TMP/ba" "$TEST_TMP/ba.dump"
sed -n '/^database=ranges$/,/^DATA=END/p' "$TEST_TMP/ab.dump" > "$TEST_TMP/ab.ranges"
sed -n '/^database=ranges$/,/^DATA=END/p' "$TEST_TMP/ba.dump" > "$TEST_TMP/ba.ranges"
[ -s "$TEST_TMP/ab.ranges" ] || fail "no ranges table in the dump"
cmp -s "$TEST_TMP/ab.ranges" "$TEST_TMP/ba.ranges" || fail "the ranges table depends on the order of the models"
echo "weights_subgraph: the ranges table is the same in either order"
