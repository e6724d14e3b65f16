# ort_explain.py's rules, case by case, on folders this test writes: each
# rule explains the difference it is for and nothing wider.  The "ORT"
# outputs are written here, so each case knows which answer is right; the
# models are small ONNX graphs whose shape the rules read (a
# QuantizeLinear -> DequantizeLinear chain, a Cast to int32, a detection
# head with NonMaxSuppression inside an If, a float op after a quantised
# chain).
. "$ROOT/tests/cli/lib.sh"
"$PY" - "$TEST_TMP" "$ROOT/tests/cli/ort_explain.py" <<'EOT'
import json, os, subprocess, sys
import numpy as np
import onnx
from onnx import helper as h, numpy_helper, TensorProto as T

tmp, oracle = sys.argv[1], sys.argv[2]
RTOL, ATOL = 2.94e-4, 1e-3

def folder(name, model, ref, ort):
    d = os.path.join(tmp, name)
    os.makedirs(os.path.join(d, "test_data_set_0"))
    os.makedirs(os.path.join(d, "ort_outputs"))
    onnx.save(model, os.path.join(d, "model.onnx"))
    for sub, outs in (("test_data_set_0", ref), ("ort_outputs", ort)):
        for i, a in enumerate(outs):
            with open(os.path.join(d, sub, f"output_{i}.pb"), "wb") as f:
                f.write(numpy_helper.from_array(a, f"y{i}").SerializeToString())
    return d

def verdict(d):
    p = subprocess.run([sys.executable, oracle, "--rtol", str(RTOL), "--atol", str(ATOL), d],
                       capture_output=True, text=True)
    r = json.loads(p.stdout)
    assert (p.returncode == 0) == r["explained"], (p.returncode, r)
    return r

failures = []
def case(n, what, d, want, rule=None):
    r = verdict(d)
    ok = r["explained"] == want and (rule is None or rule in r["rules"])
    print(f"case {n}: {what}: {'explained' if r['explained'] else 'not explained'} "
          f"{r['rules'] or r['unexplained']} {'ok' if ok else 'WRONG'}")
    if not ok:
        failures.append(n)

# the quantised chain: y0 = Dequantize(Cast(Quantize(x))), scale 0.05
scale = 0.05
c = lambda name, a: h.make_node("Constant", [], [name], value=numpy_helper.from_array(a, name))
quant = h.make_model(h.make_graph(
    [c("s", np.array(scale, np.float32)), c("z", np.array(0, np.int8)),
     h.make_node("QuantizeLinear", ["x", "s", "z"], ["q"]),
     h.make_node("Cast", ["q"], ["qc"], to=T.INT8),
     h.make_node("DequantizeLinear", ["qc", "s", "z"], ["y0"])],
    "q", [h.make_tensor_value_info("x", T.FLOAT, [8])],
    [h.make_tensor_value_info("y0", T.FLOAT, [8])]), opset_imports=[h.make_opsetid("", 17)])
ref = (np.arange(8, dtype=np.float32) - 3) * scale
# 1: one element one step apart (a rounding boundary crossed)
o = ref.copy(); o[2] += scale
case(1, "one quantisation step", folder("c1", quant, [ref], [o]), True, "quantisation-step elements")
# 2: two steps apart is a real difference
o = ref.copy(); o[2] += 2 * scale
case(2, "two quantisation steps", folder("c2", quant, [ref], [o]), False)
# 3: the same one-step difference on a plain float output has no rule
plain = h.make_model(h.make_graph([h.make_node("Relu", ["x"], ["y0"])], "p",
    [h.make_tensor_value_info("x", T.FLOAT, [8])], [h.make_tensor_value_info("y0", T.FLOAT, [8])]),
    opset_imports=[h.make_opsetid("", 17)])
o = ref.copy(); o[2] += scale
case(3, "a step on an output no quantiser made", folder("c3", plain, [ref], [o]), False)
# 4: an int32 Cast of a float may be one unit off, not two
cast = h.make_model(h.make_graph([h.make_node("Cast", ["x"], ["y0"], to=T.INT32)], "c",
    [h.make_tensor_value_info("x", T.FLOAT, [8])], [h.make_tensor_value_info("y0", T.INT32, [8])]),
    opset_imports=[h.make_opsetid("", 17)])
iref = np.arange(8, dtype=np.int32)
o = iref.copy(); o[5] += 1
case(4, "an integer Cast one unit off", folder("c4", cast, [iref], [o]), True, "quantisation-step elements")
o = iref.copy(); o[5] += 2
case(5, "an integer Cast two units off", folder("c5", cast, [iref], [o]), False)

# a detection head: boxes [N,4], labels [N], scores [N], masks [N,1,H,W],
# NonMaxSuppression inside an If's branch as torch exports it
n = 4
then_g = h.make_graph([h.make_node("NonMaxSuppression", ["b3", "s3"], ["sel"])], "then", [],
                      [h.make_tensor_value_info("sel", T.INT64, [None, 3])])
det = h.make_model(h.make_graph(
    [h.make_node("If", ["cond"], ["sel"], then_branch=then_g, else_branch=then_g),
     h.make_node("Identity", ["bx"], ["y0"]), h.make_node("Identity", ["lb"], ["y1"]),
     h.make_node("Identity", ["sc"], ["y2"]), h.make_node("Identity", ["mk"], ["y3"])],
    "det", [h.make_tensor_value_info(v, T.FLOAT, None) for v in ("cond", "b3", "s3", "bx", "sc", "mk")]
    + [h.make_tensor_value_info("lb", T.INT64, None)],
    [h.make_tensor_value_info(f"y{i}", t, None) for i, t in enumerate((T.FLOAT, T.INT64, T.FLOAT, T.FLOAT))]),
    opset_imports=[h.make_opsetid("", 17)])
boxes = np.array([[10, 10, 50, 60], [100, 20, 140, 90], [30, 200, 80, 260], [5, 5, 20, 40]], np.float32)
labels = np.array([1, 3, 2, 7], np.int64)
scores = np.array([0.9, 0.50001, 0.5, 0.2], np.float32)
masks = np.zeros((n, 1, 320, 320), np.float32)
for i, (x0, y0, x1, y1) in enumerate(boxes.astype(int)):
    masks[i, 0, y0:y1, x0:x1] = 0.8
ref = [boxes, labels, scores, masks]
def swapped(i, j):
    p = list(range(n)); p[i], p[j] = p[j], p[i]
    return [a[p].copy() for a in ref]
# 6: rows 1 and 2, whose scores tie within tolerance, swapped
case(6, "tied detections swapped", folder("c6", det, ref, swapped(1, 2)), True, "detection-order rows")
# 7: rows 0 and 1 (0.9 against 0.5) swapped: not a tie
case(7, "detections of other scores swapped", folder("c7", det, ref, swapped(0, 1)), False)
# 8: a mask that differs while its enlarged box truncates to the same
# pixels in both runs (box far from a boundary)
o = [a.copy() for a in ref]; o[3][2, 0, 210, 40] = 0.75
case(8, "a mask differs, box unchanged", folder("c8", det, ref, o), False)
# 9: the box's y2 moves across the truncation boundary of the enlarged box
# (within the box tolerance); its mask is resampled and differs
def enlarged_y2(v):
    f = np.float32
    return int(np.trunc((f(v) + f(200)) * f(.5) + (f(v) - f(200)) * f(.5) * f(30 / 28)))
lo, hi = 259.0, 261.0                      # the y2 where the enlarged box reaches 262
while hi - lo > 1e-5:
    mid = (lo + hi) / 2
    lo, hi = (mid, hi) if enlarged_y2(mid) < 262 else (lo, mid)
b = boxes.copy(); b[2, 3] = lo - 5e-4
r9 = [b, labels, scores, masks]
o = [a.copy() for a in r9]; o[0][2, 3] = hi + 5e-4; o[3][2, 0, 210, 40] = 0.75
assert enlarged_y2(lo - 5e-4) != enlarged_y2(hi + 5e-4), "case 9 must straddle a boundary"
case(9, "a mask differs, enlarged box truncates to the other pixel", folder("c9", det, r9, o), True,
     "mask-paste rows")
# 10: a box coordinate beyond tolerance is a real difference
o = [a.copy() for a in ref]; o[0][1, 0] += 1.0
case(10, "a box off by a pixel", folder("c10", det, ref, o), False)

# integer fusion: a float op after a quantised chain, y0 = Relu(Dequantize(
# Quantize(x))); ORT at its default level differs far beyond a step, and
# ORT unfused (ort_outputs_disabled/) is the evidence
fused = h.make_model(h.make_graph(
    [c("s", np.array(scale, np.float32)), c("z", np.array(0, np.int8)),
     h.make_node("QuantizeLinear", ["x", "s", "z"], ["q"]),
     h.make_node("DequantizeLinear", ["q", "s", "z"], ["dq"]),
     h.make_node("Relu", ["dq"], ["y0"])],
    "f", [h.make_tensor_value_info("x", T.FLOAT, [8])],
    [h.make_tensor_value_info("y0", T.FLOAT, [8])]), opset_imports=[h.make_opsetid("", 17)])
def unfused(d, outs):
    os.makedirs(os.path.join(d, "ort_outputs_disabled"))
    for i, a in enumerate(outs):
        with open(os.path.join(d, "ort_outputs_disabled", f"output_{i}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(a, f"y{i}").SerializeToString())
    return d
fref = (np.arange(8, dtype=np.float32) - 3) * scale
o = fref.copy(); o[1] += 0.7
case(11, "fused integer kernels, ORT unfused agrees", unfused(folder("c11", fused, [fref], [o]), [fref]),
     True, "integer-fusion elements")
case(12, "fused integer kernels, ORT unfused differs too",
     unfused(folder("c12", fused, [fref], [o]), [o]), False)
case(13, "fused integer kernels, no unfused run", folder("c13", fused, [fref], [o]), False)
case(14, "an unquantised model whose unfused run agrees",
     unfused(folder("c14", plain, [fref], [o]), [fref]), False)
sys.exit(1 if failures else 0)
EOT
