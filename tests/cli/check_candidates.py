"""check_candidates.py - candidate models for tests/cli/check.sh, built from
a task variant's reference model.

    python3 check_candidates.py VARIANT_DIR OUT_DIR

writes into OUT_DIR:
  cheat.onnx    same inputs, every output a Constant node holding the
                exported test_data_set_0/output_N.pb
  frozen.onnx   the same with 1 added to every constant (no longer the
                exported values, but still blind to the inputs)
  shape.onnx    the reference with its first output flattened
  runtime.onnx  the reference with a node of an unknown domain before the
                first output (passnet's executor rejects it)
  loop.onnx     the reference with its first output routed through a Loop
                of 2^62 iterations (hits the time limit)
  perturb.onnx  the reference with 1e-3 added to the first output
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

vdir, out = sys.argv[1], sys.argv[2]
ref = onnx.load(os.path.join(vdir, "model.onnx"))
os.makedirs(out, exist_ok=True)


def save(model, name):
    onnx.save(model, os.path.join(out, name))


def reroute(model, new_nodes, old_name, new_name, new_type=None):
    """Renames the producer's output old_name to new_name and appends
    nodes that compute old_name from it, so the graph output keeps its
    name (and its declared type unless new_type is given)."""
    g = model.graph
    for n in g.node:
        n.output[:] = [new_name if o == old_name else o for o in n.output]
        n.input[:] = [new_name if i == old_name else i for i in n.input]
    g.node.extend(new_nodes)
    if new_type is not None:
        for o in g.output:
            if o.name == old_name:
                o.CopyFrom(new_type)


def copy_of_ref():
    m = onnx.ModelProto()
    m.CopyFrom(ref)
    return m


first = ref.graph.output[0].name

# cheat: outputs as constants; frozen: constants that are not the exported ones
for name, shift in (("cheat", 0), ("frozen", 1)):
    nodes, outputs = [], []
    for k, o in enumerate(ref.graph.output):
        t = onnx.load_tensor(os.path.join(vdir, "test_data_set_0", "output_%d.pb" % k))
        a = numpy_helper.to_array(t)
        t = numpy_helper.from_array((a + shift).astype(a.dtype), "exported_%d" % k)
        nodes.append(helper.make_node("Constant", [], [o.name], value=t))
        outputs.append(o)
    g = helper.make_graph(nodes, name, list(ref.graph.input), outputs)
    save(helper.make_model(g, opset_imports=ref.opset_import), name + ".onnx")

# shape: first output flattened
m = copy_of_ref()
dims = [d.dim_value for d in ref.graph.output[0].type.tensor_type.shape.dim]
flat = helper.make_tensor_value_info(first, ref.graph.output[0].type.tensor_type.elem_type,
                                     [dims[0], int(np.prod(dims[1:]))])
reroute(m, [helper.make_node("Flatten", ["pre_flatten"], [first], axis=1)], first,
        "pre_flatten", flat)
save(m, "shape.onnx")

# runtime: an op no executor knows
m = copy_of_ref()
reroute(m, [helper.make_node("Mystery", ["pre_mystery"], [first], domain="com.example")],
        first, "pre_mystery")
m.opset_import.append(helper.make_opsetid("com.example", 1))
save(m, "runtime.onnx")

# loop: Identity inside a Loop that never ends in practice
m = copy_of_ref()
body = helper.make_graph(
    [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
     helper.make_node("Identity", ["carried_in"], ["carried_out"])],
    "body",
    [helper.make_tensor_value_info("i", TensorProto.INT64, []),
     helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
     helper.make_tensor_value_info("carried_in", TensorProto.FLOAT, None)],
    [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
     helper.make_tensor_value_info("carried_out", TensorProto.FLOAT, None)])
m.graph.initializer.extend([
    numpy_helper.from_array(np.array(1 << 62, dtype=np.int64), "trips"),
    numpy_helper.from_array(np.array(True), "keep_going")])
reroute(m, [helper.make_node("Loop", ["trips", "keep_going", "pre_loop"], [first], body=body)],
        first, "pre_loop")
save(m, "loop.onnx")

# perturb: first output + 1e-3
m = copy_of_ref()
m.graph.initializer.append(numpy_helper.from_array(np.array(1e-3, dtype=np.float32), "eps"))
reroute(m, [helper.make_node("Add", ["pre_add", "eps"], [first])], first, "pre_add")
save(m, "perturb.onnx")
