"""redteam_candidates.py - the candidates tests/cli/redteam.sh throws at
`passnet check`, built from one exported variant the way a candidate author
would, with onnx and numpy only.

    python3 redteam_candidates.py VARIANT_DIR LOOKUP_DIR OUT_DIR

VARIANT_DIR is an exported variant (model.onnx, test_data_set_0/) whose
first input has the first output's dtype and shape.  LOOKUP_DIR holds
input_N.pb and output_N.pb of inputs a candidate author could predict (the
rule checks used to publish: the task's own seed) and the reference's
outputs on them.  Writes OUT_DIR/NAME/model.onnx for each NAME below.

Cheats (each must get the error class redteam.sh names, never a score):
  constant       every output a Constant holding the exported output_N.pb
  lookup         Where(inputs == the predictable inputs, their outputs, 0)
  lookup_exported  the same on the exported inputs and outputs
  echo           output 0 is input 0
  extra_input    one more graph input than the reference
  double_output  output 0 cast to float64
  flat_output    output 0 flattened
  nan            output 0 with a NaN in element 0
  inf            output 0 with an Inf in element 0
  endless_loop   output 0 through a Loop of 2^62 iterations
  memory_bomb    output 0 plus 0 * ReduceSum(Expand(x, [2^20, 2^20]))
  outside_data   a weight whose external data is ../../<file> (outside)
  absolute_data  a weight whose external data is an absolute path
Legitimate (must pass):
  reference      the reference itself
  rewrite        operands of commutative ops swapped, Relu as Max(x, 0),
                 nodes in another topological order
  slow           the reference plus 0 * Sigmoid(ReduceSum(two 768x768 MatMuls
                 of an input-dependent matrix)): correct, and slower
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

vdir, lookup_dir, out = sys.argv[1], sys.argv[2], sys.argv[3]
ref = onnx.load(os.path.join(vdir, "model.onnx"))
g0 = ref.graph
first = g0.output[0].name
elem = g0.output[0].type.tensor_type.elem_type


def pb(path):
    return numpy_helper.to_array(onnx.load_tensor(path))


def pbs(d, stem, n):
    return [pb(os.path.join(d, "%s_%d.pb" % (stem, k))) for k in range(n)]


exported_in = pbs(os.path.join(vdir, "test_data_set_0"), "input", len(g0.input))
exported_out = pbs(os.path.join(vdir, "test_data_set_0"), "output", len(g0.output))
lookup_in = pbs(lookup_dir, "input", len(g0.input))
lookup_out = pbs(lookup_dir, "output", len(g0.output))


def copy_of_ref():
    m = onnx.ModelProto()
    m.CopyFrom(ref)
    return m


def save(model, name):
    os.makedirs(os.path.join(out, name), exist_ok=True)
    onnx.save(model, os.path.join(out, name, "model.onnx"))


def const(name, a):
    return numpy_helper.from_array(np.asarray(a), name)


def reroute(m, new_nodes, new_name, new_type=None):
    """The first output's producer now writes new_name; new_nodes compute
    the first output from it (its declared type kept unless new_type)."""
    for n in m.graph.node:
        n.output[:] = [new_name if o == first else o for o in n.output]
        n.input[:] = [new_name if i == first else i for i in n.input]
    m.graph.node.extend(new_nodes)
    if new_type is not None:
        m.graph.output[0].CopyFrom(new_type)


def model_of(nodes, inits, name):
    g = helper.make_graph(nodes, name, list(g0.input), list(g0.output), initializer=inits)
    return helper.make_model(g, opset_imports=ref.opset_import)


# constant: the exported outputs, nothing computed
save(model_of([helper.make_node("Constant", [], [o.name], value=const("c%d" % k, exported_out[k]))
               for k, o in enumerate(g0.output)], [], "constant"), "constant")


def lookup(name, keys, answers):
    """Every output is answers[k] when every input equals keys, else 0."""
    nodes, inits, hits = [], [], []
    for i, x in enumerate(g0.input):
        inits.append(const("key_%d" % i, keys[i]))
        nodes += [helper.make_node("Equal", [x.name, "key_%d" % i], ["eq_%d" % i]),
                  helper.make_node("Cast", ["eq_%d" % i], ["eqf_%d" % i], to=TensorProto.FLOAT),
                  helper.make_node("ReduceMin", ["eqf_%d" % i], ["hit_%d" % i], keepdims=0)]
        hits.append("hit_%d" % i)
    nodes.append(helper.make_node("Min", hits, ["hitf"]) if len(hits) > 1
                 else helper.make_node("Identity", hits, ["hitf"]))
    nodes.append(helper.make_node("Cast", ["hitf"], ["hit"], to=TensorProto.BOOL))
    for k, o in enumerate(g0.output):
        a = answers[k]
        inits += [const("answer_%d" % k, a), const("miss_%d" % k, np.zeros_like(a))]
        nodes.append(helper.make_node("Where", ["hit", "answer_%d" % k, "miss_%d" % k], [o.name]))
    save(model_of(nodes, inits, name), name)


lookup("lookup", lookup_in, lookup_out)
lookup("lookup_exported", exported_in, exported_out)

# echo: output 0 is input 0 (same dtype and shape, redteam.sh picks such a variant)
m = copy_of_ref()
reroute(m, [helper.make_node("Identity", [g0.input[0].name], [first])], "unused_output")
save(m, "echo")

# other signatures
m = copy_of_ref()
m.graph.input.append(helper.make_tensor_value_info("extra", TensorProto.FLOAT, [1]))
save(m, "extra_input")

m = copy_of_ref()
dims = [d.dim_value for d in g0.output[0].type.tensor_type.shape.dim]
reroute(m, [helper.make_node("Cast", ["pre_cast"], [first], to=TensorProto.DOUBLE)], "pre_cast",
        helper.make_tensor_value_info(first, TensorProto.DOUBLE, dims))
save(m, "double_output")

m = copy_of_ref()
reroute(m, [helper.make_node("Flatten", ["pre_flatten"], [first], axis=1)], "pre_flatten",
        helper.make_tensor_value_info(first, elem, [dims[0], int(np.prod(dims[1:]))]))
save(m, "flat_output")

# NaN and Inf where the reference is finite: in one element (an output
# all NaN would not follow its inputs, a cheat of another kind)
for name, bad in (("nan", np.nan), ("inf", np.inf)):
    m = copy_of_ref()
    spoil = np.zeros(exported_out[0].shape, dtype=np.float32)
    spoil.flat[0] = bad
    m.graph.initializer.append(const("spoil", spoil))
    reroute(m, [helper.make_node("Add", ["pre_spoil", "spoil"], [first])], "pre_spoil")
    save(m, name)

# endless Loop: Identity 2^62 times
m = copy_of_ref()
body = helper.make_graph(
    [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
     helper.make_node("Identity", ["carried_in"], ["carried_out"])],
    "body",
    [helper.make_tensor_value_info("i", TensorProto.INT64, []),
     helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
     helper.make_tensor_value_info("carried_in", elem, None)],
    [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
     helper.make_tensor_value_info("carried_out", elem, None)])
m.graph.initializer.extend([const("trips", np.array(1 << 62, dtype=np.int64)),
                            const("keep_going", np.array(True))])
reroute(m, [helper.make_node("Loop", ["trips", "keep_going", "pre_loop"], [first], body=body)],
        "pre_loop")
save(m, "endless_loop")

# memory bomb: an Expand to 2^40 elements (4 TiB of float32) of an input value
m = copy_of_ref()
m.graph.initializer.extend([const("bomb_shape", np.array([1 << 20, 1 << 20], dtype=np.int64)),
                            const("bomb_zero", np.array(0, dtype=np.float32))])
reroute(m, [helper.make_node("ReduceMax", [g0.input[0].name], ["bomb_seed"], keepdims=0),
            helper.make_node("Expand", ["bomb_seed", "bomb_shape"], ["bomb"]),
            helper.make_node("ReduceSum", ["bomb"], ["bomb_sum"], keepdims=0),
            helper.make_node("Mul", ["bomb_sum", "bomb_zero"], ["bomb_nothing"]),
            helper.make_node("Add", ["pre_bomb", "bomb_nothing"], [first])], "pre_bomb")
save(m, "memory_bomb")

# external data outside the candidate's folder: a weight read from
# ../../<file> or from an absolute path (both exist: a leak if read)
secret = os.path.abspath(os.path.join(out, "secret.bin"))
np.full(4096, 1.0, dtype=np.float32).tofile(secret)
for name, loc in (("outside_data", "../../secret.bin"), ("absolute_data", secret)):
    m = copy_of_ref()
    w = TensorProto(name="leak", data_type=TensorProto.FLOAT, dims=[1])
    w.data_location = TensorProto.EXTERNAL
    for k, v in (("location", loc), ("offset", "0"), ("length", "4")):
        e = w.external_data.add()
        e.key, e.value = k, v
    m.graph.initializer.append(w)
    reroute(m, [helper.make_node("Mul", ["pre_leak", "leak"], [first])], "pre_leak")
    save(m, name)

# --- legitimate ---
save(copy_of_ref(), "reference")

COMMUTATIVE = {"Add", "Mul", "Max", "Min", "Sum"}
m = copy_of_ref()
nodes = []
for n in m.graph.node:
    if n.op_type in COMMUTATIVE and len(n.input) == 2:
        n.input[:] = [n.input[1], n.input[0]]
    if n.op_type == "Relu":
        zero = "relu_zero_%d" % len(nodes)
        m.graph.initializer.append(const(zero, np.array(0, dtype=np.float32)))
        n = helper.make_node("Max", [zero, n.input[0]], list(n.output), name=n.name + "_as_max")
    nodes.append(n)
# another topological order: repeatedly take the last node whose inputs are ready
ready = {i.name for i in m.graph.input} | {t.name for t in m.graph.initializer} | {""}
order, left = [], list(nodes)
while left:
    k = max(i for i, n in enumerate(left) if all(x in ready for x in n.input))
    n = left.pop(k)
    order.append(n)
    ready |= set(n.output)
del m.graph.node[:]
m.graph.node.extend(order)
save(m, "rewrite")

# slow: correct to the bit, plus two 768x768 MatMuls the executor cannot fold
m = copy_of_ref()
m.graph.initializer.extend([const("slow_shape", np.array([768, 768], dtype=np.int64)),
                            const("slow_zero", np.array(0, dtype=np.float32))])
reroute(m, [helper.make_node("ReduceMean", [g0.input[0].name], ["slow_seed"], keepdims=0),
            helper.make_node("Expand", ["slow_seed", "slow_shape"], ["slow_a"]),
            helper.make_node("MatMul", ["slow_a", "slow_a"], ["slow_b"]),
            helper.make_node("MatMul", ["slow_b", "slow_a"], ["slow_c"]),
            helper.make_node("ReduceSum", ["slow_c"], ["slow_sum"], keepdims=0),
            helper.make_node("Sigmoid", ["slow_sum"], ["slow_bounded"]),
            helper.make_node("Mul", ["slow_bounded", "slow_zero"], ["slow_nothing"]),
            helper.make_node("Add", ["pre_slow", "slow_nothing"], [first])], "pre_slow")
save(m, "slow")
