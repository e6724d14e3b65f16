#!/usr/bin/env python3
# ops_layout_cases.py OUTDIR - writes ONNX backend-test style cases (model.onnx
# + test_data_set_0/) for the layout, index and generator ops, covering what
# the ONNX 1.12 node tests leave out: opset-18 behaviour (Split num_outputs,
# Pad axes and wrap, scatter max/min, Col2Im, CenterCropPad), old opsets
# (attributes that later became inputs), negative steps and clamping,
# strings, and inputs large enough to run the kernels on several threads.
# Expected outputs come from numpy; used by tests/cli/ops_layout.sh.
import itertools
import os
import shutil
import sys

import numpy as np
import onnx
from onnx import TensorProto as TP
from onnx import helper as h
from onnx import numpy_helper as nh

ROOT = sys.argv[1]
NP2TP = {np.dtype('float32'): TP.FLOAT, np.dtype('float64'): TP.DOUBLE,
         np.dtype('int64'): TP.INT64, np.dtype('int32'): TP.INT32, np.dtype('bool'): TP.BOOL,
         np.dtype('uint8'): TP.UINT8, np.dtype('float16'): TP.FLOAT16,
         np.dtype('int8'): TP.INT8, np.dtype('O'): TP.STRING}


def case(name, op, inputs, outputs, opset, **attrs):
    """One single-node case.  inputs: (name, array or None for an omitted
    optional input); outputs: (name, expected array)."""
    d = os.path.join(ROOT, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d + "/test_data_set_0")
    node = h.make_node(op, [n if a is not None else "" for n, a in inputs],
                       [n for n, _ in outputs], **attrs)
    gi = [h.make_tensor_value_info(n, NP2TP[a.dtype], a.shape) for n, a in inputs if a is not None]
    go = [h.make_tensor_value_info(n, NP2TP[a.dtype], a.shape) for n, a in outputs]
    m = h.make_model(h.make_graph([node], name, gi, go),
                     opset_imports=[h.make_opsetid("", opset)])
    m.ir_version = 8
    with open(d + "/model.onnx", "wb") as f:
        f.write(m.SerializeToString())
    present = [(n, a) for n, a in inputs if a is not None]
    for i, (n, a) in enumerate(present):
        with open(f"{d}/test_data_set_0/input_{i}.pb", "wb") as f:
            f.write(nh.from_array(a, n).SerializeToString())
    for j, (n, a) in enumerate(outputs):
        with open(f"{d}/test_data_set_0/output_{j}.pb", "wb") as f:
            f.write(nh.from_array(a, n).SerializeToString())


rng = np.random.default_rng(0)


def f32(*s):
    return rng.standard_normal(s).astype(np.float32)


def I(*v):
    return np.array(v, dtype=np.int64)


# --- Col2Im reference
def col2im(x, img, blk, dil, pads, strides):
    N, CK, L = x.shape; K = int(np.prod(blk)); C = CK // K; s = len(img)
    nb = [(img[d] + pads[d] + pads[s+d] - (dil[d]*(blk[d]-1)+1)) // strides[d] + 1 for d in range(s)]
    out = np.zeros((N, C) + tuple(img), x.dtype)
    for n in range(N):
        for c in range(C):
            for kf, kk in enumerate(itertools.product(*[range(b) for b in blk])):
                for lf, ll in enumerate(itertools.product(*[range(b) for b in nb])):
                    p = [ll[d]*strides[d] - pads[d] + kk[d]*dil[d] for d in range(s)]
                    if all(0 <= p[d] < img[d] for d in range(s)):
                        out[(n, c) + tuple(p)] += x[n, c*K+kf, lf]
    return out
x = f32(1, 5, 5)
case("col2im_basic", "Col2Im", [("x", x), ("img", I(5, 5)), ("blk", I(1, 5))],
     [("y", col2im(x, [5,5], [1,5], [1,1], [0,0,0,0], [1,1]))], 18)
x = f32(2, 2*4, 6)   # img 5x6? compute L
img, blk, dil, pads, st = [5, 7], [2, 2], [1, 2], [1, 0, 0, 1], [2, 2]
nb = [(img[d]+pads[d]+pads[2+d]-(dil[d]*(blk[d]-1)+1))//st[d]+1 for d in range(2)]
x = f32(2, 2*4, nb[0]*nb[1])
case("col2im_strided", "Col2Im", [("x", x), ("img", I(*img)), ("blk", I(*blk))],
     [("y", col2im(x, img, blk, dil, pads, st))], 18, dilations=dil, pads=pads, strides=st)
x = f32(1, 3, 4)
case("col2im_1d", "Col2Im", [("x", x), ("img", I(6)), ("blk", I(3))], [("y", col2im(x, [6], [3], [1], [0,0], [1]))], 18)

# --- CenterCropPad
def ccp(x, shape, axes=None):
    axes = axes if axes is not None else list(range(x.ndim))
    pad_sl = [slice(0, s) for s in x.shape]; crop_sl = [slice(0, s) for s in x.shape]; ns = list(x.shape)
    for a, sh in zip(axes, shape):
        dim = x.shape[a]
        if sh < dim:
            d = (dim - sh) // 2; crop_sl[a] = slice(d, d + sh); ns[a] = sh
        elif sh > dim:
            d = (sh - dim) // 2; pad_sl[a] = slice(d, d + dim); ns[a] = sh
    out = np.zeros(ns, x.dtype); out[tuple(pad_sl)] = x[tuple(crop_sl)]; return out
x = f32(20, 10, 3)
case("ccp_crop_pad", "CenterCropPad", [("x", x), ("s", I(9, 13, 3))], [("y", ccp(x, [9, 13, 3]))], 18)
case("ccp_axes", "CenterCropPad", [("x", x), ("s", I(7, 14))], [("y", ccp(x, [7, 14], [0, 1]))], 18, axes=[0, 1])
case("ccp_negaxes", "CenterCropPad", [("x", x), ("s", I(2, 5))], [("y", ccp(x, [2, 5], [2, 1]))], 18, axes=[-1, -2])

# --- Split opset 18 num_outputs uneven, and split inputs
x = f32(7, 3)
case("split18_uneven", "Split", [("x", x)], [("a", x[0:3]), ("b", x[3:6]), ("c", x[6:7])], 18, num_outputs=3)
x = f32(2, 8)
case("split18_even", "Split", [("x", x)], [("a", x[:, 0:4]), ("b", x[:, 4:8])], 18, num_outputs=2, axis=-1)
case("split11_attr", "Split", [("x", x)], [("a", x[:, 0:3]), ("b", x[:, 3:8])], 11, axis=1, split=[3, 5])
case("split2_equal", "Split", [("x", x)], [("a", x[:, 0:2]), ("b", x[:, 2:4]), ("c", x[:, 4:6]), ("d", x[:, 6:8])], 2, axis=1)

# --- Pad opset 18 axes, wrap, negative pads, reflect > dim
x = f32(3, 4, 5)
case("pad18_axes", "Pad", [("x", x), ("p", I(1, 2, 0, 3)), ("v", np.array(1.5, np.float32)), ("ax", I(0, 2))],
     [("y", np.pad(x, [(1, 0), (0, 0), (2, 3)], constant_values=1.5))], 18, mode="constant")
case("pad18_negaxes_edge", "Pad", [("x", x), ("p", I(2, 1)), ("v", None), ("ax", I(-2))],
     [("y", np.pad(x, [(0, 0), (2, 1), (0, 0)], mode="edge"))], 18, mode="edge")
case("pad19_wrap", "Pad", [("x", x), ("p", I(0, 3, 2, 1, 2, 4))],
     [("y", np.pad(x, [(0, 1), (3, 2), (2, 4)], mode="wrap"))], 18, mode="wrap")
case("pad_reflect_big", "Pad", [("x", x), ("p", I(0, 5, 7, 0, 6, 9))],
     [("y", np.pad(x, [(0, 0), (5, 6), (7, 9)], mode="reflect"))], 13, mode="reflect")
case("pad_negative", "Pad", [("x", x), ("p", I(-1, 2, -2, 1, -1, 3))],
     [("y", np.pad(x[1:, :-1, 2:], [(0, 1), (2, 0), (0, 3)]))], 13)
case("pad2_attr", "Pad", [("x", x)], [("y", np.pad(x, [(0, 0), (1, 1), (2, 0)], constant_values=-2.0))], 2, pads=[0, 1, 2, 0, 1, 0], value=-2.0)
xi = rng.integers(0, 100, (4, 6)).astype(np.int32)
case("pad_int_edge", "Pad", [("xi", xi), ("p", I(3, 2, 1, 4))], [("y", np.pad(xi, [(3, 1), (2, 4)], mode="edge"))], 13, mode="edge")
xs = np.array([["a", "bb"], ["ccc", "d"]], dtype=object)
case("pad_string", "Pad", [("xs", xs), ("p", I(1, 0, 0, 1)), ("v", np.array("z", dtype=object))],
     [("y", np.pad(xs, [(1, 0), (0, 1)], constant_values="z"))], 13)

# --- ScatterElements / ScatterND max/min (18)
data = f32(4, 5); idx = rng.integers(-4, 4, (6, 5)).astype(np.int64); upd = f32(6, 5)
def scat_el(data, idx, upd, axis, red):
    out = data.copy()
    for pos in np.ndindex(idx.shape):
        p = list(pos); p[axis] = idx[pos] % data.shape[axis]; p = tuple(p)
        out[p] = {"max": max, "min": min, "add": lambda a, b: a + b, "mul": lambda a, b: a * b, "none": lambda a, b: b}[red](out[p], upd[pos])
    return out
for red in ["max", "min"]:
    case(f"scatter_el_{red}", "ScatterElements", [("d", data), ("i", idx), ("u", upd)], [("y", scat_el(data, idx, upd, 0, red))], 18, axis=0, reduction=red)
idx2 = rng.integers(0, 5, (4, 3)).astype(np.int64); upd2 = f32(4, 3)
case("scatter_el_mul_axis1", "ScatterElements", [("d", data), ("i", idx2), ("u", upd2)], [("y", scat_el(data, idx2, upd2, 1, "mul"))], 16, axis=1, reduction="mul")
data3 = f32(4, 3, 2); ind = np.array([[1], [3], [1]], np.int64); u3 = f32(3, 3, 2)
def scat_nd(data, ind, upd, red):
    out = data.copy()
    for t in np.ndindex(ind.shape[:-1]):
        k = tuple(ind[t]); f = {"max": np.maximum, "min": np.minimum, "add": np.add, "mul": np.multiply, "none": lambda a, b: b}[red]
        out[k] = f(out[k], upd[t])
    return out
for red in ["max", "min", "add"]:
    case(f"scatternd_{red}", "ScatterND", [("d", data3), ("i", ind), ("u", u3)], [("y", scat_nd(data3, ind, u3, red))], 18, reduction=red)
ind2 = np.array([[0, 2], [3, 1]], np.int64); u4 = f32(2, 2)
case("scatternd_pairs", "ScatterND", [("d", data3), ("i", ind2), ("u", u4)], [("y", scat_nd(data3, ind2, u4, "none"))], 13)

# --- Slice variants
x = f32(5, 6, 7)
case("slice_negsteps", "Slice", [("x", x), ("s", I(-1, 10, 5)), ("e", I(-100, 1, 0)), ("a", I(0, 1, 2)), ("st", I(-2, -3, -1))],
     [("y", x[-1:-100:-2, 10:1:-3, 5:0:-1])], 13)
case("slice_clamp", "Slice", [("x", x), ("s", I(-100, 2)), ("e", I(100, -1)), ("a", I(-1, 1))],
     [("y", x[:, 2:-1, -100:100])], 13)
case("slice_empty", "Slice", [("x", x), ("s", I(4)), ("e", I(2)), ("a", I(1))], [("y", x[:, 4:2])], 13)
case("slice1_attr", "Slice", [("x", x)], [("y", x[1:3, :, 2:-1])], 1, starts=[1, 2], ends=[3, -1], axes=[0, 2])
case("slice1_noaxes", "Slice", [("x", x)], [("y", x[1:3, 0:4])], 1, starts=[1, 0], ends=[3, 4])
case("slice10_int32", "Slice", [("x", x), ("s", np.array([1], np.int32)), ("e", np.array([4], np.int32)), ("a", np.array([2], np.int32)), ("st", np.array([2], np.int32))],
     [("y", x[:, :, 1:4:2])], 10)

# --- Squeeze / Unsqueeze / Reshape old & edge
x = f32(1, 3, 1, 2)
case("squeeze11_attr", "Squeeze", [("x", x)], [("y", x.reshape(3, 1, 2))], 11, axes=[0])
case("squeeze13_noaxes", "Squeeze", [("x", x)], [("y", x.reshape(3, 2))], 13)
case("unsqueeze11_attr", "Unsqueeze", [("x", x)], [("y", x.reshape(1, 1, 3, 1, 2, 1))], 11, axes=[-1, 1])
x = f32(0, 3, 4)
case("reshape_allowzero", "Reshape", [("x", x), ("s", I(3, 4, 0))], [("y", x.reshape(3, 4, 0))], 14, allowzero=1)
x = f32(2, 3, 4)
case("reshape1_attr", "Reshape", [("x", x)], [("y", x.reshape(4, 6))], 1, shape=[4, -1])
case("flatten_axis0", "Flatten", [("x", x)], [("y", x.reshape(1, 24))], 13, axis=0)

# --- GatherND batch dims 2, Gather int32 negative, GatherElements axis last
x = f32(2, 3, 4, 5); ind = rng.integers(-4, 4, (2, 3, 6, 1)).astype(np.int64)
out = np.stack([np.stack([x[b, c][ind[b, c, :, 0]] for c in range(3)]) for b in range(2)])
case("gathernd_b2", "GatherND", [("x", x), ("i", ind)], [("y", out)], 13, batch_dims=2)
ind = np.array([[[0, 1], [2, 3]], [[1, 0], [0, 4]]], np.int64)
x2 = f32(2, 3, 5)
out = np.stack([np.stack([x2[b][tuple(ind[b, t])] for t in range(2)]) for b in range(2)])
case("gathernd_b1_full", "GatherND", [("x", x2), ("i", ind)], [("y", out)], 13, batch_dims=1)
x = f32(4, 5, 6); ind = np.array([[-1, 0], [2, -3]], np.int32)
case("gather_axis1_i32", "Gather", [("x", x), ("i", ind)], [("y", np.take(x, ind, axis=1))], 13, axis=1)
case("gather_axis2_scalar", "Gather", [("x", x), ("i", np.array(-2, np.int64))], [("y", np.take(x, -2, axis=2))], 13, axis=2)
ind = rng.integers(-6, 6, (4, 5, 3)).astype(np.int64)
case("gather_el_last", "GatherElements", [("x", x), ("i", ind)], [("y", np.take_along_axis(x, ind % 6, axis=2))], 13, axis=-1)
ind = rng.integers(0, 4, (2, 5, 6)).astype(np.int64)
case("gather_el_axis0_small", "GatherElements", [("x", x), ("i", ind)], [("y", np.take_along_axis(x, ind, axis=0))], 13, axis=0)

# --- Big layout cases (parallel + blocked transpose)
x = f32(333, 517)
case("transpose_big2d", "Transpose", [("x", x)], [("y", x.T.copy())], 13)
x = f32(3, 65, 33, 40)
case("transpose_big4d", "Transpose", [("x", x)], [("y", x.transpose(0, 2, 3, 1).copy())], 13, perm=[0, 2, 3, 1])
xh = f32(64, 129, 17).astype(np.float16)
case("transpose_f16", "Transpose", [("x", xh)], [("y", xh.transpose(2, 0, 1).copy())], 13, perm=[2, 0, 1])
x = f32(2, 3000, 20)
case("slice_big_step", "Slice", [("x", x), ("s", I(5, 1)), ("e", I(2999, 19)), ("a", I(1, 2)), ("st", I(3, 2))], [("y", x[:, 5:2999:3, 1:19:2])], 13)
case("tile_big", "Tile", [("x", x), ("r", I(2, 1, 3))], [("y", np.tile(x, (2, 1, 3)))], 13)
x = f32(1, 400, 1, 30)
case("expand_big", "Expand", [("x", x), ("s", I(3, 1, 50, 1))], [("y", x * np.ones((3, 1, 50, 1), np.float32))], 13)
x = f32(3, 1)
case("expand_fewer", "Expand", [("x", x), ("s", I(4))], [("y", np.broadcast_to(x, (3, 4)).copy())], 13)
a, b, c = f32(4, 100, 30), f32(4, 2, 30), f32(4, 300, 30)
case("concat_big", "Concat", [("a", a), ("b", b), ("c", c)], [("y", np.concatenate([a, b, c], 1))], 13, axis=1)
x = f32(8, 16, 30, 30)
case("d2s_crd_big", "DepthToSpace", [("x", x)], [("y", x.reshape(8, 4, 2, 2, 30, 30).transpose(0, 1, 4, 2, 5, 3).reshape(8, 4, 60, 60))], 13, blocksize=2, mode="CRD")
case("s2d_big", "SpaceToDepth", [("x", x)], [("y", x.reshape(8, 16, 10, 3, 10, 3).transpose(0, 3, 5, 1, 2, 4).reshape(8, 144, 10, 10))], 13, blocksize=3)

# --- strings
xs = np.array([["a", "bb", "c"], ["dd", "e", "ff"]], dtype=object)
case("transpose_str", "Transpose", [("x", xs)], [("y", xs.T.copy())], 13)
case("concat_str", "Concat", [("a", xs), ("b", xs)], [("y", np.concatenate([xs, xs], 0))], 13, axis=0)
case("gather_str", "Gather", [("x", xs), ("i", I(2, 0, 2))], [("y", np.take(xs, [2, 0, 2], axis=1))], 13, axis=1)
case("slice_str", "Slice", [("x", xs), ("s", I(-1)), ("e", I(-10)), ("a", I(1)), ("st", I(-1))], [("y", xs[:, ::-1].copy())], 13)
case("unique_str", "Unique", [("x", np.array(["b", "a", "b", "c", "a"], dtype=object))],
     [("y", np.array(["a", "b", "c"], dtype=object)), ("i", I(1, 0, 3)), ("v", I(1, 0, 1, 2, 0)), ("c", I(2, 2, 1))], 11)
case("trilu_str", "Trilu", [("x", np.array([["a", "b"], ["c", "d"]], dtype=object))], [("y", np.array([["a", "b"], ["", "d"]], dtype=object))], 14)

# --- misc
x = f32(3, 4); cnd = np.array([1, 0, 1, 1, 0, 1], bool)
case("compress_noaxis", "Compress", [("x", x), ("c", cnd)], [("y", np.compress(cnd, x))], 11)
case("compress_short", "Compress", [("x", x), ("c", np.array([0, 1], bool))], [("y", x[:, 1:2])], 11, axis=1)
x = np.array([[0.0, -0.0, 2.0], [np.nan, 0.0, 1.0]], np.float32)
case("nonzero_float", "NonZero", [("x", x)], [("y", np.array(np.nonzero(x), np.int64))], 13)
x = np.array([3, 0, 1, 0], np.int64)
case("nonzero_i64", "NonZero", [("x", x)], [("y", np.array(np.nonzero(x), np.int64))], 13)
ind = np.array([[1, -2], [7, 0]], np.int64); depth = np.array([5.7], np.float32); vals = np.array([0, 9], np.int32)
oh = np.zeros((2, 5, 2), np.int32)
for i in range(2):
    for j in range(2):
        v = ind[i, j] + (5 if ind[i, j] < 0 else 0)
        if 0 <= v < 5: oh[i, v, j] = 9
case("onehot_axis_neg2", "OneHot", [("i", ind), ("d", depth), ("v", vals)], [("y", oh)], 11, axis=-2)
case("range_neg_int", "Range", [("s", np.array(10, np.int64)), ("l", np.array(-3, np.int64)), ("d", np.array(-4, np.int64))], [("y", np.arange(10, -3, -4, dtype=np.int64))], 11)
case("range_double", "Range", [("s", np.array(0.5)), ("l", np.array(3.2)), ("d", np.array(0.3))], [("y", np.arange(0.5, 3.2, 0.3))], 11)
case("range_empty", "Range", [("s", np.array(5, np.int32)), ("l", np.array(1, np.int32)), ("d", np.array(2, np.int32))], [("y", np.arange(5, 1, 2, dtype=np.int32))], 11)
x = rng.integers(0, 3, (3, 4, 2)).astype(np.float32)
yy, ii, vv, cc = np.unique(x, return_index=True, return_inverse=True, return_counts=True, axis=0)
case("unique_axis0", "Unique", [("x", x)], [("y", yy), ("i", ii.astype(np.int64)), ("v", vv.reshape(-1).astype(np.int64)), ("c", cc.astype(np.int64))], 11, axis=0)
x = np.array([3, 1, 2, 3, 1, 5, 2], np.int32)
case("unique_unsorted_i32", "Unique", [("x", x)], [("y", np.array([3, 1, 2, 5], np.int32)), ("i", I(0, 1, 2, 5)), ("v", I(0, 1, 2, 0, 1, 3, 2)), ("c", I(2, 2, 2, 1))], 11, sorted=0)
x = rng.integers(0, 2, (2, 3, 4)).astype(np.int64)
yy, ii, vv, cc = np.unique(x, return_index=True, return_inverse=True, return_counts=True, axis=2)
case("unique_axis2", "Unique", [("x", x)], [("y", yy), ("i", ii.astype(np.int64)), ("v", vv.reshape(-1).astype(np.int64)), ("c", cc.astype(np.int64))], 11, axis=2)
x = f32(2, 3, 5, 4)
k = np.array(-1, np.int64)
case("trilu_lower_4d", "Trilu", [("x", x), ("k", k)], [("y", np.tril(x, -1))], 14, upper=0)
x = f32(5, 2, 3)
lens = I(2, 5)
y = x.copy()
for b in range(2): y[:lens[b], b] = x[:lens[b], b][::-1]
case("revseq_time0", "ReverseSequence", [("x", x), ("l", lens)], [("y", y)], 10, batch_axis=1, time_axis=0)
xi = rng.integers(0, 9, (3, 4)).astype(np.int32)
case("eyelike_k_neg", "EyeLike", [("x", xi)], [("y", np.eye(3, 4, -1, dtype=np.int32))], 9, k=-1)
case("eyelike_bool", "EyeLike", [("x", xi)], [("y", np.eye(3, 4, 2, dtype=bool))], 9, k=2, dtype=TP.BOOL)
case("cos_f16", "ConstantOfShape", [("s", I(2, 3))], [("y", np.full((2, 3), 1.5, np.float16))], 9, value=nh.from_array(np.array([1.5], np.float16)))
case("cos_default", "ConstantOfShape", [("s", I(4))], [("y", np.zeros(4, np.float32))], 9)
x = f32(3, 5)
case("tile1_old", "Tile", [("x", x), ("t", np.array(3, np.int64)), ("a", np.array(1, np.int64))], [("y", np.tile(x, (1, 3)))], 1)
case("concat1_default", "Concat", [("a", x), ("b", x)], [("y", np.concatenate([x, x], 1))], 1)
