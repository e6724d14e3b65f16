"""Writes N models that decode but whose meaning is hostile.

usage: hostile_semantic.py SEED N OUTDIR MODEL...

hostile_mutate.py flips bytes, so few of its outputs still decode and the
stages after extract rarely see them.  Here every mutation edits the decoded
ModelProto (python3-onnx, a fixture maker only) and writes valid protobuf,
so shape inference, partition, dedup, the executor and export meet it.
Deterministic from SEED (random.Random(SEED)).  One mutation per file
(s0000.onnx, ...), chosen among those that apply to the model drawn:

  dim          a dim of an input, output or value_info set to 0, -1, 2^31, 2^62
  init_dim     an initializer's dim set to 0, -1, 2^31, 2^62 or off by one
               (its dims then disagree with its data length)
  attr_int     an int attribute (axis, pads, strides, dilations, kernel_shape,
               group, perm, to, keepdims, ...) set to 0, negative, huge
  attr_type    an attribute's type changed (INT to FLOATS or STRING, ...)
  op_swap      an op_type swapped for an op of another arity
  ghost_input  a node input renamed to a name nothing produces
  cycle        a node input renamed to its own output or a later node's
  dup_node     a node duplicated: two nodes write the same outputs
  init_dtype   an initializer's data_type changed (string, bool, unknown 99...)
  opset        ai.onnx opset set to 1 or 10000, or an unknown domain added
               to a node
  empty_body   an If/Loop/Scan body graph emptied
  huge_shape   a Reshape/Expand/ConstantOfShape/Tile/Range shape input made a
               constant asking for 2^40 elements (an Expand or Tile inserted
               where the model has none)
  string_init  an initializer replaced by a string tensor of its dims
  string_input a float graph input declared as a string input

One line per file on stdout: the file, the model, the mutation and what it
changed, so that a failure can be traced to its cause.
"""
import os
import random
import sys

import onnx
from onnx import AttributeProto, TensorProto, helper

HUGE_DIMS = [0, -1, 2 ** 31, 2 ** 62]
EXTREME_INTS = [0, -1, -7, 2 ** 31, 2 ** 62, -(2 ** 63), 2 ** 63 - 1, 1000]
OTHER_ARITY = ["Relu", "Add", "Gemm", "Where", "Concat", "Split", "Slice",
               "Conv", "TopK", "Identity", "LSTM", "Loop", "Einsum", "Pad",
               "NonZero", "Range", "Resize", "Gather", "Unknown_Op"]
DTYPES = [0, TensorProto.STRING, TensorProto.BOOL, TensorProto.INT64,
          TensorProto.FLOAT16, TensorProto.BFLOAT16, TensorProto.COMPLEX64,
          TensorProto.UINT8, 99]


def all_nodes(graph):
    """Nodes of the graph and of its attribute graphs, outer first."""
    for n in graph.node:
        yield n
        for a in n.attribute:
            if a.type == AttributeProto.GRAPH:
                yield from all_nodes(a.g)
            for g in a.graphs:
                yield from all_nodes(g)


def tensor_dims(model):
    vis = list(model.graph.input) + list(model.graph.output) + list(model.graph.value_info)
    return [(v.name, d) for v in vis if v.type.HasField("tensor_type")
            for d in v.type.tensor_type.shape.dim]


def m_dim(rnd, m):
    dims = tensor_dims(m)
    if not dims:
        return None
    name, d = rnd.choice(dims)
    v = rnd.choice(HUGE_DIMS)
    d.dim_value = v
    return "value %s dim := %d" % (name, v)


def m_init_dim(rnd, m):
    inits = [t for t in m.graph.initializer if len(t.dims)]
    if not inits:
        return None
    t = rnd.choice(inits)
    i = rnd.randrange(len(t.dims))
    v = rnd.choice(HUGE_DIMS + [t.dims[i] + 1])
    t.dims[i] = v
    return "initializer %s dim %d := %d" % (t.name, i, v)


def m_attr_int(rnd, m):
    attrs = [(n, a) for n in all_nodes(m.graph) for a in n.attribute
             if a.type in (AttributeProto.INT, AttributeProto.INTS) and (a.type == AttributeProto.INT or len(a.ints))]
    if not attrs:
        return None
    n, a = rnd.choice(attrs)
    v = rnd.choice(EXTREME_INTS)
    if a.type == AttributeProto.INT:
        a.i = v
    else:
        a.ints[rnd.randrange(len(a.ints))] = v
    return "%s (%s) attribute %s := %d" % (n.name, n.op_type, a.name, v)


def m_attr_type(rnd, m):
    attrs = [(n, a) for n in all_nodes(m.graph) for a in n.attribute
             if a.type in (AttributeProto.INT, AttributeProto.INTS, AttributeProto.FLOAT)]
    if not attrs:
        return None
    n, a = rnd.choice(attrs)
    name = a.name
    kind = rnd.choice(["FLOATS", "STRING", "INT", "TENSOR"])
    if kind == "FLOATS":
        new = helper.make_attribute(name, [1.5, -2.0])
    elif kind == "STRING":
        new = helper.make_attribute(name, "hostile")
    elif kind == "INT":
        new = helper.make_attribute(name, 3)
    else:
        new = helper.make_attribute(name, helper.make_tensor("t", TensorProto.FLOAT, [1], [1.0]))
    a.CopyFrom(new)
    return "%s (%s) attribute %s retyped %s" % (n.name, n.op_type, name, kind)


def m_op_swap(rnd, m):
    nodes = list(all_nodes(m.graph))
    if not nodes:
        return None
    n = rnd.choice(nodes)
    new = rnd.choice([o for o in OTHER_ARITY if o != n.op_type])
    old = n.op_type
    n.op_type = new
    return "%s op_type %s := %s" % (n.name, old, new)


def nodes_with_inputs(m):
    return [n for n in m.graph.node if any(i for i in n.input)]


def m_ghost_input(rnd, m):
    nodes = nodes_with_inputs(m)
    if not nodes:
        return None
    n = rnd.choice(nodes)
    i = rnd.choice([k for k, x in enumerate(n.input) if x])
    n.input[i] = "ghost_%d" % rnd.randrange(1000)
    return "%s (%s) input %d := %s" % (n.name, n.op_type, i, n.input[i])


def m_cycle(rnd, m):
    nodes = list(m.graph.node)
    cands = [k for k, n in enumerate(nodes) if any(n.input) and any(n.output)]
    if not cands:
        return None
    k = rnd.choice(cands)
    n = nodes[k]
    later = [o for nn in nodes[k:] for o in nn.output if o]
    target = rnd.choice(later)
    i = rnd.choice([j for j, x in enumerate(n.input) if x])
    n.input[i] = target
    return "%s (%s) input %d := %s (own or later output)" % (n.name, n.op_type, i, target)


def m_dup_node(rnd, m):
    if not len(m.graph.node):
        return None
    k = rnd.randrange(len(m.graph.node))
    n = onnx.NodeProto()
    n.CopyFrom(m.graph.node[k])
    n.name = n.name + "_twin"
    m.graph.node.insert(rnd.randrange(len(m.graph.node) + 1), n)
    return "%s (%s) duplicated" % (m.graph.node[k].name, n.op_type)


def m_init_dtype(rnd, m):
    if not len(m.graph.initializer):
        return None
    t = rnd.choice(m.graph.initializer)
    v = rnd.choice([d for d in DTYPES if d != t.data_type])
    old = t.data_type
    t.data_type = v
    return "initializer %s data_type %d := %d" % (t.name, old, v)


def m_opset(rnd, m):
    choice = rnd.randrange(3)
    if choice < 2:
        v = [1, 10000][choice]
        for o in m.opset_import:
            if o.domain in ("", "ai.onnx"):
                o.version = v
        return "ai.onnx opset := %d" % v
    nodes = list(all_nodes(m.graph))
    if not nodes:
        return None
    n = rnd.choice(nodes)
    n.domain = "org.nobody"
    m.opset_import.add(domain="org.nobody", version=1)
    return "%s (%s) domain := org.nobody" % (n.name, n.op_type)


def m_empty_body(rnd, m):
    bodies = [(n, a) for n in all_nodes(m.graph) for a in n.attribute if a.type == AttributeProto.GRAPH]
    if not bodies:
        return None
    n, a = rnd.choice(bodies)
    how = rnd.choice(["nodes", "outputs", "all"])
    if how in ("nodes", "all"):
        del a.g.node[:]
    if how in ("outputs", "all"):
        del a.g.output[:]
    return "%s (%s) body %s emptied of %s" % (n.name, n.op_type, a.name, how)


def int64_const(m, name, values):
    m.graph.initializer.append(helper.make_tensor(name, TensorProto.INT64, [len(values)], values))


def m_huge_shape(rnd, m):
    big = [2 ** 20, 2 ** 20]
    shaped = [n for n in m.graph.node
              if n.op_type in ("Reshape", "Expand", "ConstantOfShape", "Tile", "Range") and len(n.input)]
    if shaped and rnd.random() < 0.7:
        n = rnd.choice(shaped)
        name = "huge_%d" % rnd.randrange(10 ** 6)
        if n.op_type == "Range":
            m.graph.initializer.append(helper.make_tensor(name, TensorProto.INT64, [], [2 ** 40]))
            while len(n.input) < 2:
                n.input.append("")
            n.input[1] = name
        else:
            int64_const(m, name, big)
            k = 0 if n.op_type == "ConstantOfShape" else 1
            while len(n.input) <= k:
                n.input.append("")
            n.input[k] = name
        return "%s (%s) shape input := 2^40 elements" % (n.name, n.op_type)
    # none: an Expand or Tile of a node's first input feeding that node
    nodes = [n for n in m.graph.node if len(n.input) and n.input[0]]
    if not nodes:
        return None
    n = rnd.choice(nodes)
    op = rnd.choice(["Expand", "Tile"])
    shape = "huge_shape_%d" % rnd.randrange(10 ** 6)
    out = shape + "_out"
    # Tile's repeats must have the input's rank: 4 is the commonest here
    # Expand: leading dims 2^20 x 2^20 before whatever the input has (up to
    # rank 4); Tile's repeats must have the input's rank: 4 is the commonest
    int64_const(m, shape, big + [1] * 4 if op == "Expand" else [2 ** 10] * 4)
    k = list(m.graph.node).index(n)
    m.graph.node.insert(k, helper.make_node(op, [n.input[0], shape], [out], name=shape + "_node"))
    n.input[0] = out
    return "%s inserted before %s (%s): 2^40 elements" % (op, n.name, n.op_type)


def m_string_init(rnd, m):
    inits = [t for t in m.graph.initializer if t.data_type == TensorProto.FLOAT]
    if not inits:
        return None
    t = rnd.choice(inits)
    count = 1
    for d in t.dims:
        count *= d
    # built by hand: past 2^16 strings the count disagrees with the dims too
    new = TensorProto()
    new.name = t.name
    new.data_type = TensorProto.STRING
    new.dims.extend(t.dims)
    new.string_data.extend(b"x%d" % i for i in range(min(max(count, 0), 2 ** 16)))
    t.CopyFrom(new)
    return "initializer %s := string tensor" % t.name


def m_string_input(rnd, m):
    init_names = {t.name for t in m.graph.initializer}
    ins = [v for v in m.graph.input if v.name not in init_names and v.type.HasField("tensor_type")]
    if not ins:
        return None
    v = rnd.choice(ins)
    v.type.tensor_type.elem_type = TensorProto.STRING
    return "input %s := string" % v.name


MUTATIONS = [m_dim, m_init_dim, m_attr_int, m_attr_type, m_op_swap, m_ghost_input,
             m_cycle, m_dup_node, m_init_dtype, m_opset, m_empty_body, m_huge_shape,
             m_string_init, m_string_input]


def main():
    seed, n, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    paths = sys.argv[4:]
    os.makedirs(out, exist_ok=True)
    rnd = random.Random(seed)
    # weights may be external files next to the models: the mutations keep
    # the references (missing there, passnet keeps them as statistics)
    originals = [(p, onnx.load(p, load_external_data=False).SerializeToString()) for p in paths]
    for i in range(n):
        path, data = rnd.choice(originals)
        order = MUTATIONS[:]
        rnd.shuffle(order)
        for mutate in order:
            m = onnx.ModelProto()
            m.ParseFromString(data)
            what = mutate(rnd, m)
            if what is not None:
                break
        else:
            what = "none applies: unchanged"
        name = "s%04d.onnx" % i
        with open(os.path.join(out, name), "wb") as f:
            f.write(m.SerializeToString())
        print("%s %s %s: %s" % (name, os.path.basename(os.path.dirname(path)), mutate.__name__[2:], what))


if __name__ == "__main__":
    main()
