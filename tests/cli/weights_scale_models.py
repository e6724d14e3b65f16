"""Models for tests/cli/weights_scale.sh, written into argv[1].

folded.onnx: a small detector trunk as trained exporters leave it: each
  Conv carries a batch-norm folded into per-output-channel scales (gamma /
  sqrt(var), log-uniform over four decades), then Relu; a head Conv whose
  first four channels (box deltas) carry scales of about 1e-3 and the next
  four (scores) about 1, split into two outputs.  Drawn at the whole
  tensor's std, the box output comes out about 1000x too large.
compensated.onnx: two Convs where the second undoes the first's channel
  scales along its input channels (dim 1): per-output-channel statistics
  cannot keep that, so only extract's per-layer correction brings the
  regenerated output within 10x.
noweights.onnx (+ noweights.data, which the test deletes): 24 Conv+Relu
  layers and a MatMul whose weights live in an external file; without it
  the weights are regenerated blind.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
rng = np.random.default_rng(26)


def conv_w(o, i, k, out_scale):
    """Conv weight [o, i, k, k] with He-like spread times a per-output-channel scale."""
    w = rng.standard_normal((o, i, k, k)).astype(np.float32) * np.sqrt(2.0 / (i * k * k))
    return (w * out_scale.reshape(o, 1, 1, 1)).astype(np.float32)


def save(name, nodes, inits, inputs, outputs, **kw):
    g = helper.make_graph(nodes, name, inputs, outputs,
                          [numpy_helper.from_array(a, n) for n, a in inits.items()])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], producer_name="w26")
    m.ir_version = 8
    onnx.checker.check_model(m)
    onnx.save(m, os.path.join(out, name + ".onnx"), **kw)


x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 32, 32])

# --- folded -------------------------------------------------------------------
nodes, inits, prev, ch = [], {}, "x", 3
for layer, width in enumerate([16, 32, 32]):
    # the folded batch-norm: gamma / sqrt(running var), a channel's own scale;
    # the bias makes the next layer's input about unit size again
    scale = 10.0 ** rng.uniform(-2, 2, width).astype(np.float32)
    w = conv_w(width, ch, 3, scale)
    b = (rng.standard_normal(width) * 0.1).astype(np.float32)
    inits[f"w{layer}"], inits[f"b{layer}"] = w, b
    nodes.append(helper.make_node("Conv", [prev, f"w{layer}", f"b{layer}"], [f"c{layer}"],
                                  pads=[1, 1, 1, 1]))
    # a per-channel Mul by the inverse scale (what the next folded layer's
    # inputs expect) keeps the real activations unit sized
    inits[f"inv{layer}"] = (1.0 / scale).reshape(1, width, 1, 1).astype(np.float32)
    nodes.append(helper.make_node("Mul", [f"c{layer}", f"inv{layer}"], [f"m{layer}"]))
    nodes.append(helper.make_node("Relu", [f"m{layer}"], [f"r{layer}"]))
    prev, ch = f"r{layer}", width
head_scale = np.array([1e-3] * 4 + [1.0] * 4, dtype=np.float32)
inits["wh"] = conv_w(8, ch, 1, head_scale)
inits["bh"] = np.zeros(8, dtype=np.float32)
inits["split"] = np.array([4, 4], dtype=np.int64)
nodes.append(helper.make_node("Conv", [prev, "wh", "bh"], ["head"]))
nodes.append(helper.make_node("Split", ["head", "split"], ["boxes", "scores"], axis=1))
save("folded", nodes, inits, [x],
     [helper.make_tensor_value_info("boxes", TensorProto.FLOAT, [1, 4, 32, 32]),
      helper.make_tensor_value_info("scores", TensorProto.FLOAT, [1, 4, 32, 32])])

# --- compensated ----------------------------------------------------------------
s = 10.0 ** rng.uniform(-3, 3, 16).astype(np.float32)
w1 = conv_w(16, 3, 3, s)
w2 = rng.standard_normal((4, 16, 3, 3)).astype(np.float32) * np.sqrt(2.0 / 144)
w2 = (w2 / s.reshape(1, 16, 1, 1)).astype(np.float32)
save("compensated",
     [helper.make_node("Conv", ["x", "w1"], ["c1"], pads=[1, 1, 1, 1]),
      helper.make_node("Relu", ["c1"], ["r1"]),
      helper.make_node("Conv", ["r1", "w2"], ["y"], pads=[1, 1, 1, 1])],
     {"w1": w1, "w2": w2}, [x],
     [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 32, 32])])

# --- noweights ------------------------------------------------------------------
nodes, inits, prev = [], {}, "x"
ch = 3
for layer in range(24):
    inits[f"w{layer}"] = conv_w(8, ch, 3, np.ones(8, dtype=np.float32))
    nodes.append(helper.make_node("Conv", [prev, f"w{layer}"], [f"c{layer}"], pads=[1, 1, 1, 1]))
    nodes.append(helper.make_node("Relu", [f"c{layer}"], [f"r{layer}"]))
    prev, ch = f"r{layer}", 8
inits["shape"] = np.array([1, 8 * 32 * 32], dtype=np.int64)
inits["fc"] = (rng.standard_normal((8 * 32 * 32, 10)) * 0.01).astype(np.float32)
nodes.append(helper.make_node("Reshape", [prev, "shape"], ["flat"]))
nodes.append(helper.make_node("MatMul", ["flat", "fc"], ["logits"]))
save("noweights", nodes, inits, [x],
     [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, 10])],
     save_as_external_data=True, all_tensors_to_one_file=True, location="noweights.data",
     size_threshold=64)
