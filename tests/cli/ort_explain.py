#!/usr/bin/env python3
"""ort_explain.py - explains, element by element, why ONNX Runtime's outputs
of a backend-test folder differ from passnet's, or says that they cannot be
explained.  An oracle for tests/cli/ort_corpus.sh and export_ort.sh, which
call it only on folders that time.js found to disagree.

    ort_explain.py --rtol R --atol A DIR...

DIR holds model.onnx, passnet's outputs (test_data_set_0/output_N.pb) and
ORT's (ort_outputs/output_N.pb, written by time.js --save-outputs).  An
element agrees when |ort - passnet| <= atol + rtol * |passnet|, as in
time.js.  Every element that does not must be explained by one of four
rules, each a property of how the output is computed, checked here on the
very values, never a wider tolerance for the whole output:

 1. quantisation step.  An output made by QuantizeLinear (through Cast and
    layout-only ops), or dequantised from one, takes values on a grid of
    step s (1 for the integers, the DequantizeLinear scale for the floats).
    Rounding to that grid turns a difference within tolerance before the
    quantiser into a whole step after it when the value lies near a
    rounding boundary, so such elements may differ by one step, never more.
    An integer output made by Cast from a float may, for the same reason,
    differ by one.
 2. detection order.  Detection heads (NonMaxSuppression, then TopK or a
    sort by score) emit rows ordered by score: boxes [N,4], scores [N],
    labels [N], masks [N,...].  Two scores that agree within tolerance may
    come out in the other order, which swaps whole rows.  Rows may be
    matched to other rows only among rows whose scores tie within
    tolerance, and matched rows must then agree in every per-row output.
 3. mask paste.  torchvision's Mask R-CNN pastes each 28x28 mask into the
    image inside its box enlarged by 30/28 (one pixel of padding a side),
    truncated to integer pixels.  A box coordinate that agrees within
    tolerance can truncate to the other integer, and then the whole mask is
    resampled at another size: such a mask row may differ, but only for a
    row whose enlarged box truncates differently in the two runs.
 4. integer fusion.  At its default level ORT fuses QuantizeLinear and
    DequantizeLinear around Conv, MatMul and Add into integer kernels
    (QLinearConv, u8s8 GEMMs), which round and, on x86 without VNNI,
    saturate pairs of products to int16: its outputs then differ from the
    ONNX semantics passnet computes, through any float ops that follow.  In
    a model holding QuantizeLinear, an element is explained when ORT with
    graph optimisations disabled (ort_outputs_disabled/, time.js --level
    disabled) agrees with passnet on it: the difference is ORT's fusion,
    ORT differing from itself.

Prints one JSON line per DIR: {"path", "explained", "rules": {rule: count},
"unexplained": first element not explained}; exits 1 when any DIR has an
unexplained element or lacks its files.
"""
import argparse
import json
import os
import sys

import numpy as np
import onnx
from onnx import numpy_helper

LAYOUT_OPS = {"Cast", "Identity", "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Transpose"}
MASK_RESOLUTION = 28  # torchvision's mask head output (MaskRCNNPredictor)


def load_pb(path):
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return numpy_helper.to_array(t)


def load_outputs(folder):
    out = []
    while os.path.exists(os.path.join(folder, f"output_{len(out)}.pb")):
        out.append(load_pb(os.path.join(folder, f"output_{len(out)}.pb")))
    return out


class Graph:
    """The producers and constants of a model's main graph."""

    def __init__(self, model):
        g = model.graph
        self.outputs = [o.name for o in g.output]
        self.producer = {o: n for n in g.node for o in n.output}
        self.const = {i.name: numpy_helper.to_array(i) for i in g.initializer}
        for n in g.node:
            if n.op_type == "Constant":
                for a in n.attribute:
                    if a.name == "value":
                        self.const[n.output[0]] = numpy_helper.to_array(a.t)
        self.ops = set()
        self.collect_ops(g)
        self.elem = {}
        for v in list(g.value_info) + list(g.input) + list(g.output):
            self.elem[v.name] = v.type.tensor_type.elem_type

    def collect_ops(self, g):
        """Op types of G and of every graph nested in its nodes (torch
        exports put NonMaxSuppression inside a Loop or If)."""
        for n in g.node:
            self.ops.add(n.op_type)
            for a in n.attribute:
                for sub in ([a.g] if a.type == onnx.AttributeProto.GRAPH else []) + list(a.graphs):
                    self.collect_ops(sub)

    def through_layout(self, name):
        """The first producer of NAME that is not a layout-only op."""
        n = self.producer.get(name)
        while n is not None and n.op_type in LAYOUT_OPS and not self.is_float_to_int_cast(n):
            n = self.producer.get(n.input[0])
        return n

    def is_float_to_int_cast(self, n):
        if n.op_type != "Cast":
            return False
        src = self.elem.get(n.input[0])
        return src in (onnx.TensorProto.FLOAT, onnx.TensorProto.FLOAT16,
                       onnx.TensorProto.BFLOAT16, onnx.TensorProto.DOUBLE)

    def step(self, name):
        """One grid step of output NAME under rule 1, or None."""
        n = self.through_layout(name)
        if n is None:
            return None
        if n.op_type == "QuantizeLinear" or self.is_float_to_int_cast(n):
            return 1.0
        if n.op_type == "DequantizeLinear":
            q = self.through_layout(n.input[0])
            s = self.const.get(n.input[1])
            if q is not None and q.op_type == "QuantizeLinear" and s is not None and s.size == 1:
                return float(s.reshape(()))
        return None


def bad_mask(got, want, rtol, atol):
    g = got.astype(np.float64)
    w = want.astype(np.float64)
    both_nan = np.isnan(g) & np.isnan(w)
    with np.errstate(invalid="ignore"):
        return ~both_nan & ~(g == w) & ~(np.abs(g - w) <= atol + rtol * np.abs(w))


def detection_outputs(outs):
    """(boxes, scores, per-row output indices) when the outputs look like a
    detection head's: all share a leading dim N, one is [N,4] float, one a
    1-D float of N; else None."""
    if len(outs) < 2 or any(o.ndim == 0 for o in outs):
        return None
    n = outs[0].shape[0]
    if any(o.shape[0] != n for o in outs):
        return None
    boxes = [i for i, o in enumerate(outs) if o.ndim == 2 and o.shape[1] == 4 and o.dtype.kind == "f"]
    scores = [i for i, o in enumerate(outs) if o.ndim == 1 and o.dtype.kind == "f"]
    if len(boxes) != 1 or len(scores) != 1:
        return None
    return boxes[0], scores[0]


def match_rows(ort, ref, score_i, mask_i, rtol, atol):
    """Rule 2: perm[i] = the ORT row matched to passnet row i, matched only
    among rows whose passnet scores tie within tolerance, each matched pair
    agreeing in every per-row output (masks aside: rule 3 judges them).
    None when some row has no match."""
    n = ref[0].shape[0]
    s = ref[score_i].astype(np.float64)
    used = np.zeros(n, bool)
    perm = []
    for i in range(n):
        ties = [j for j in range(n) if abs(s[j] - s[i]) <= atol + rtol * abs(s[i])]
        pick = None
        for j in sorted(ties, key=lambda j: (j != i, abs(j - i))):
            if used[j]:
                continue
            if all(not bad_mask(ort[k][j], ref[k][i], rtol, atol).any()
                   for k in range(len(ref)) if k != mask_i):
                pick = j
                break
        if pick is None:
            return None
        used[pick] = True
        perm.append(pick)
    return perm


def enlarged_box_ints(box):
    """Rule 3: torchvision's expand_boxes(box, (M + 2) / M) truncated to
    integers, as paste_masks_in_image computes them (in float32)."""
    b = box.astype(np.float32)
    scale = np.float32((MASK_RESOLUTION + 2) / MASK_RESOLUTION)
    half_w = (b[2] - b[0]) * np.float32(0.5) * scale
    half_h = (b[3] - b[1]) * np.float32(0.5) * scale
    cx = (b[2] + b[0]) * np.float32(0.5)
    cy = (b[3] + b[1]) * np.float32(0.5)
    e = np.array([cx - half_w, cy - half_h, cx + half_w, cy + half_h], np.float32)
    return tuple(int(v) for v in np.trunc(e))


def explain(folder, rtol, atol):
    res = {"path": folder, "explained": False, "rules": {}, "unexplained": None}
    ref = load_outputs(os.path.join(folder, "test_data_set_0"))
    ort = load_outputs(os.path.join(folder, "ort_outputs"))
    if not ref or len(ort) != len(ref):
        res["unexplained"] = f"{len(ref)} passnet outputs, {len(ort)} ORT outputs saved"
        return res
    if any(o.shape != r.shape for o, r in zip(ort, ref)):
        res["unexplained"] = "output shapes differ"
        return res
    graph = Graph(onnx.load(os.path.join(folder, "model.onnx"), load_external_data=False))
    rules = res["rules"]

    det = detection_outputs(ref) if "NonMaxSuppression" in graph.ops else None
    if det is not None and any(bad_mask(o, r, rtol, atol).any() for o, r in zip(ort, ref)):
        box_i, score_i = det
        masks = [i for i, r in enumerate(ref) if r.ndim == 4]
        mask_i = masks[0] if len(masks) == 1 else None
        perm = match_rows(ort, ref, score_i, mask_i, rtol, atol)
        if perm is None:
            res["unexplained"] = "detections: a row matches no ORT row among its score ties"
            return res
        moved = sum(1 for i, j in enumerate(perm) if i != j)
        if moved:
            rules["detection-order rows"] = moved
        ort = [o[perm] for o in ort]
        if mask_i is not None:
            for i in range(ref[0].shape[0]):
                if not bad_mask(ort[mask_i][i], ref[mask_i][i], rtol, atol).any():
                    continue
                if enlarged_box_ints(ref[box_i][i]) == enlarged_box_ints(ort[box_i][i]):
                    res["unexplained"] = (f"output {mask_i} row {i}: the mask differs but the "
                                          "enlarged box truncates to the same pixels in both runs")
                    return res
                rules["mask-paste rows"] = rules.get("mask-paste rows", 0) + 1
                ort[mask_i][i] = ref[mask_i][i]

    unfused = integer_fusion_outputs(folder, graph, ref)
    for k, (o, r) in enumerate(zip(ort, ref)):
        bad = bad_mask(o, r, rtol, atol)
        if not bad.any():
            continue
        step = graph.step(graph.outputs[k]) if k < len(graph.outputs) else None
        if step is not None:
            d = np.abs(o.astype(np.float64) - r.astype(np.float64))
            within = d <= step * (1 + 1e-5) + atol + rtol * np.abs(r.astype(np.float64))
            count(rules, "quantisation-step elements", bad & within)
            bad = bad & ~within
        if bad.any() and unfused is not None:
            fused_only = bad & ~bad_mask(unfused[k], r, rtol, atol)
            count(rules, "integer-fusion elements", fused_only)
            bad = bad & ~fused_only
        if bad.any():
            first = tuple(int(x) for x in np.argwhere(bad)[0])
            res["unexplained"] = (f"output {k} element {first}: ort {o[first]!r}, passnet {r[first]!r}, "
                                  "and no rule applies" + (f" (one quantisation step is {step:.6g})"
                                                           if step is not None else ""))
            return res
    res["explained"] = True
    return res


def count(rules, rule, explained):
    """Adds the elements a rule explained to its count (a rule that
    explained none is not listed)."""
    n = int(explained.sum())
    if n:
        rules[rule] = rules.get(rule, 0) + n


def integer_fusion_outputs(folder, graph, ref):
    """Rule 4's evidence: ORT's outputs at optimisation level 'disabled'
    (ort_outputs_disabled/, time.js --level disabled), for a model holding
    QuantizeLinear; else None."""
    if "QuantizeLinear" not in graph.ops:
        return None
    unfused = load_outputs(os.path.join(folder, "ort_outputs_disabled"))
    if len(unfused) != len(ref) or any(u.shape != r.shape for u, r in zip(unfused, ref)):
        return None
    return unfused


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rtol", type=float, required=True)
    ap.add_argument("--atol", type=float, required=True)
    ap.add_argument("dirs", nargs="+")
    a = ap.parse_args()
    ok = True
    for d in a.dirs:
        try:
            r = explain(d, a.rtol, a.atol)
        except (OSError, ValueError, onnx.onnx_cpp2py_export.checker.ValidationError) as e:
            r = {"path": d, "explained": False, "rules": {}, "unexplained": str(e)}
        ok = ok and r["explained"]
        print(json.dumps(r))
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
