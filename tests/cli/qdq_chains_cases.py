#!/usr/bin/env python3
# qdq_chains_cases.py OUTDIR - writes backend-test style cases (model.onnx +
# test_data_set_0/) of the quantized chains the executor runs as one kernel
# (runtime/fuse.h):
#     DequantizeLinear(x) -> Conv(., DequantizeLinear(w), b) [-> Relu] -> QuantizeLinear
# on 8-bit integers (runtime/ops/conv_q8.c), and
#     DequantizeLinear(a) + DequantizeLinear(b) [-> Relu] -> QuantizeLinear
# in one pass (runtime/ops/quant.c; qadd_* cases: numpy's float32
# operations of the five nodes, which the fused loop must match bit for bit).  Expected outputs come from numpy, computed the
# way docs/executor.md states the fused chain: the sums exact in integers,
# then the chain's float32 operations in its order.  Geometries cover the
# GEMM (grouped, strided, dilated, padded, 1-D, batch 2, more taps than one
# im2col segment holds) and the depthwise path; outputs uint8 and int8.
# Cases named fallback_* have operands the 8-bit path does not take (a
# weight zero point, int8 activations): they run node by node, and use
# power-of-two scales so that the float32 chain is exact too.  Used by
# tests/cli/qdq_chains.sh.
import os
import shutil
import sys

import numpy as np
import onnx
from onnx import TensorProto as TP
from onnx import helper as h
from onnx import numpy_helper as nh

ROOT = sys.argv[1]
f32 = np.float32


def conv_int(x, w, group, strides, pads, dil):
    """Exact integer convolution of x [N, C, *sp] and w [M, C/g, *k]; pads
    are (begin..., end...) and the padding reads 0."""
    nsp = x.ndim - 2
    xp = np.pad(x.astype(np.int64), [(0, 0), (0, 0)] +
                [(pads[i], pads[nsp + i]) for i in range(nsp)])
    N, C = x.shape[:2]
    M = w.shape[0]
    k = w.shape[2:]
    out = [(xp.shape[2 + i] - dil[i] * (k[i] - 1) - 1) // strides[i] + 1 for i in range(nsp)]
    y = np.zeros([N, M] + out, dtype=np.int64)
    cg, mg = C // group, M // group
    for g in range(group):
        xs = xp[:, g * cg:(g + 1) * cg]
        ws = w[g * mg:(g + 1) * mg].astype(np.int64)
        for tap in np.ndindex(*k):
            sl = [slice(None), slice(None)]
            for i in range(nsp):
                start = tap[i] * dil[i]
                sl.append(slice(start, start + strides[i] * (out[i] - 1) + 1, strides[i]))
            patch = xs[tuple(sl)]                          # [N, cg, *out]
            wt = ws[(slice(None), slice(None)) + tap]      # [mg, cg]
            y[:, g * mg:(g + 1) * mg] += np.einsum('nc...,mc->nm...', patch, wt)
    return y


def activate(v, act):
    """The activation nodes' float32 formulas (runtime/ops/activation.c)."""
    kind = act[0] if act else None
    if kind == 'Relu':
        return np.maximum(v, f32(0))
    if kind == 'HardSwish':
        h = v * f32(1.0 / 6.0) + f32(0.5)
        return v * np.where(h < 0, f32(0), np.where(h > 1, f32(1), h))
    if kind == 'HardSigmoid':
        h = f32(act[1]) * v + f32(act[2])
        return np.where(h < 0, f32(0), np.where(h > 1, f32(1), h)).astype(f32)
    if kind == 'Clip':
        return np.where(v < act[1], f32(act[1]), np.where(v > act[2], f32(act[2]), v)).astype(f32)
    return v


def requant(acc, mult, bias, act, ys, yzp, ydt):
    """The chain's float32 operations on exact sums, per output channel."""
    shape = [1, -1] + [1] * (acc.ndim - 2)
    v = acc.astype(f32) * mult.reshape(shape) + bias.reshape(shape)
    v = activate(v, act)
    v = np.rint(v / f32(ys)) + f32(yzp)
    lo, hi = (0, 255) if ydt == np.uint8 else (-128, 127)
    return np.clip(v, lo, hi).astype(ydt)


def save(name, model, inputs, outputs):
    onnx.checker.check_model(model)
    d = os.path.join(ROOT, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(os.path.join(d, 'test_data_set_0'))
    onnx.save(model, os.path.join(d, 'model.onnx'))
    for i, (n, a) in enumerate(inputs):
        onnx.save_tensor(nh.from_array(a, n), os.path.join(d, 'test_data_set_0', 'input_%d.pb' % i))
    for i, (n, a) in enumerate(outputs):
        onnx.save_tensor(nh.from_array(a, n), os.path.join(d, 'test_data_set_0', 'output_%d.pb' % i))


TPD = {np.uint8: TP.UINT8, np.int8: TP.INT8}


def qadd_case(name, shape_a, shape_b, relu=True, dt=np.uint8, ydt=np.uint8, seed=0):
    """DequantizeLinear(a) + DequantizeLinear(b) [-> Relu] -> QuantizeLinear."""
    rng = np.random.default_rng(seed)
    info = np.iinfo(dt)
    a = rng.integers(info.min, info.max + 1, size=shape_a).astype(dt)
    b = rng.integers(info.min, info.max + 1, size=shape_b).astype(dt)
    sa, sb, sy = (f32(rng.uniform(0.01, 0.2)) for _ in range(3))
    za, zb = (dt(rng.integers(0, 200) if dt == np.uint8 else rng.integers(-20, 20)) for _ in range(2))
    zy = ydt(rng.integers(0, 50))
    inits = [nh.from_array(np.array(v), n) for v, n in
             [(sa, 'sa'), (za, 'za'), (sb, 'sb'), (zb, 'zb'), (sy, 'sy'), (zy, 'zy')]]
    nodes = [h.make_node('DequantizeLinear', ['a', 'sa', 'za'], ['af']),
             h.make_node('DequantizeLinear', ['b', 'sb', 'zb'], ['bf']),
             h.make_node('Add', ['af', 'bf'], ['s'])]
    last = 's'
    if relu:
        nodes.append(h.make_node('Relu', ['s'], ['r']))
        last = 'r'
    nodes.append(h.make_node('QuantizeLinear', [last, 'sy', 'zy'], ['y']))
    v = (a.astype(np.int32) - np.int32(za)).astype(f32) * sa + \
        (b.astype(np.int32) - np.int32(zb)).astype(f32) * sb
    if relu:
        v = np.where(v > 0, v, f32(0))
    lo, hi = (0, 255) if ydt == np.uint8 else (-128, 127)
    y = np.clip(np.rint(v / sy) + f32(zy), lo, hi).astype(ydt)
    graph = h.make_graph(nodes, name,
                         [h.make_tensor_value_info('a', TPD[dt], list(a.shape)),
                          h.make_tensor_value_info('b', TPD[dt], list(b.shape))],
                         [h.make_tensor_value_info('y', TPD[ydt], list(y.shape))], inits)
    model = h.make_model(graph, opset_imports=[h.make_opsetid('', 13)])
    model.ir_version = 7
    save(name, model, [('a', a), ('b', b)], [('y', y)])


def case(name, N, C, M, sp, k, group=1, strides=None, pads=None, dil=None, relu=True,
         per_channel=True, bias=True, ydt=np.uint8, xdt=np.uint8, wzp=0, pow2=False, seed=0,
         act=None, y_scale=None, gemm=False):
    """act: ('HardSwish',), ('HardSigmoid', alpha, beta) or ('Clip', lo, hi)
    between the Conv and the QuantizeLinear instead of relu's Relu.  gemm:
    a fully connected Gemm (transB = 1) of x [N, C] by w [M, C] instead of
    the Conv (sp and k empty)."""
    act = act or (('Relu',) if relu else None)
    rng = np.random.default_rng(seed)
    nsp = len(sp)
    strides = strides or [1] * nsp
    pads = pads or [0] * (2 * nsp)
    dil = dil or [1] * nsp
    info = np.iinfo(xdt)
    x = rng.integers(info.min, info.max + 1, size=[N, C] + sp).astype(xdt)
    w = rng.integers(-128, 128, size=[M, C // group] + k).astype(np.int8)
    if pow2:
        xs, xzp = f32(2.0 ** -4), xdt(3 if xdt == np.uint8 else -3)
        ws = (f32(2.0) ** -rng.integers(5, 9, size=M)).astype(f32)
        ys, yzp = f32(2.0 ** -1), ydt(7)
    else:
        xs, xzp = f32(rng.uniform(0.005, 0.05)), xdt(rng.integers(0, 256) if xdt == np.uint8 else 0)
        ws = rng.uniform(0.002, 0.02, size=M).astype(f32)
        ys, yzp = f32(rng.uniform(0.5, 4.0)), ydt(rng.integers(0, 40))
    if y_scale:
        ys = f32(y_scale)   # an activation's output range
    if not per_channel:
        ws = ws[:1]
    bq = rng.integers(-20000, 20000, size=M).astype(np.int32)
    bscale = (xs * (ws if per_channel else np.repeat(ws, M))).astype(f32)
    b = bq.astype(f32) * bscale if bias else np.zeros(M, f32)

    inits = [nh.from_array(np.array(xs), 'xs'), nh.from_array(np.array(xzp), 'xzp'),
             nh.from_array(w, 'wq'), nh.from_array(ws if per_channel else np.array(ws[0]), 'ws'),
             nh.from_array(np.array(ys), 'ys'), nh.from_array(np.array(yzp), 'yzp')]
    nodes = [h.make_node('DequantizeLinear', ['x', 'xs', 'xzp'], ['xf'])]
    if wzp:
        inits.append(nh.from_array(np.full(M if per_channel else 1, wzp, np.int8)
                                   if per_channel else np.array(np.int8(wzp)), 'wzp'))
        nodes.append(h.make_node('DequantizeLinear', ['wq', 'ws', 'wzp'], ['wf'],
                                 **({'axis': 0} if per_channel else {})))
    else:
        nodes.append(h.make_node('DequantizeLinear', ['wq', 'ws'], ['wf'],
                                 **({'axis': 0} if per_channel else {})))
    conv_in = ['xf', 'wf']
    if bias:
        inits += [nh.from_array(bq, 'bq'), nh.from_array(bscale, 'bs')]
        nodes.append(h.make_node('DequantizeLinear', ['bq', 'bs'], ['bf'], axis=0))
        conv_in.append('bf')
    if gemm:
        nodes.append(h.make_node('Gemm', conv_in, ['cv'], transB=1))
    else:
        nodes.append(h.make_node('Conv', conv_in, ['cv'], group=group, strides=strides, pads=pads,
                                 dilations=dil))
    last = 'cv'
    if act and act[0] == 'Clip':
        inits += [nh.from_array(np.array(f32(act[1])), 'clo'), nh.from_array(np.array(f32(act[2])), 'chi')]
        nodes.append(h.make_node('Clip', ['cv', 'clo', 'chi'], ['ac']))
        last = 'ac'
    elif act and act[0] == 'HardSigmoid':
        nodes.append(h.make_node('HardSigmoid', ['cv'], ['ac'], alpha=act[1], beta=act[2]))
        last = 'ac'
    elif act:
        nodes.append(h.make_node(act[0], ['cv'], ['ac']))
        last = 'ac'
    nodes.append(h.make_node('QuantizeLinear', [last, 'ys', 'yzp'], ['y']))

    wz = np.int64(wzp)
    xshift = (x.astype(np.int64) - np.int64(xzp))
    if gemm:
        acc = xshift @ (w.astype(np.int64) - wz).T
    else:
        acc = conv_int(xshift, w.astype(np.int64) - wz, group, strides, pads, dil)
    mult = (xs * (ws if per_channel else np.repeat(ws, M))).astype(f32)
    y = requant(acc, mult, b, act, ys, yzp, ydt)

    graph = h.make_graph(nodes, name, [h.make_tensor_value_info('x', TPD[xdt], list(x.shape))],
                         [h.make_tensor_value_info('y', TPD[ydt], list(y.shape))], inits)
    model = h.make_model(graph, opset_imports=[h.make_opsetid('', 14)])
    model.ir_version = 7
    save(name, model, [('x', x)], [('y', y)])


# the GEMM path
case('qconv_3x3_pad', 1, 5, 7, [9, 11], [3, 3], pads=[1, 1, 1, 1], seed=1)
case('qconv_7x7_stride2_int8out', 2, 3, 16, [20, 18], [7, 7], strides=[2, 2],
     pads=[3, 3, 3, 3], relu=False, per_channel=False, ydt=np.int8, seed=2)
case('qconv_grouped_1x1', 1, 8, 6, [6, 7], [1, 1], group=2, seed=3)
case('qconv_dilated_nobias', 1, 4, 13, [12, 12], [3, 3], dil=[2, 2], pads=[2, 1, 2, 1],
     bias=False, seed=4)
case('qconv_1d', 2, 6, 10, [40], [5], strides=[3], pads=[2, 2], seed=5)
case('qconv_many_taps', 1, 130, 9, [70, 40], [3, 3], pads=[1, 1, 1, 1], seed=6)
case('qconv_asym_stride', 1, 3, 20, [17, 23], [2, 3], strides=[2, 1], pads=[0, 1, 1, 0], seed=7)
case('qconv_same_dilated_asym', 1, 6, 8, [13, 9], [3, 2], dil=[2, 1], pads=[1, 0, 3, 1], seed=12)
case('qconv_same_1d', 1, 5, 7, [50], [5], pads=[2, 2], relu=False, seed=13)
case('qconv_same_wide_pad', 1, 3, 6, [6, 4], [5, 7], pads=[2, 3, 2, 3], seed=14)
# activations between the Conv and the QuantizeLinear
case('qconv_hardswish', 1, 8, 20, [10, 10], [3, 3], pads=[1, 1, 1, 1], act=('HardSwish',), seed=15)
case('qconv_hardsigmoid', 1, 16, 9, [6, 6], [1, 1], act=('HardSigmoid', 0.1666667, 0.5),
     y_scale=1 / 255, seed=16)
case('qconv_clip6', 1, 8, 12, [9, 9], [3, 3], pads=[1, 1, 1, 1], act=('Clip', 0.0, 6.0),
     y_scale=6 / 255, seed=17)
case('qconv_depthwise_hardswish', 1, 10, 10, [12, 12], [3, 3], group=10, pads=[1, 1, 1, 1],
     act=('HardSwish',), seed=18)
# stride-1 windows as wide as their input, packed straight from the planes:
# a k-quad past K and dilated, uneven taps; several segments of positions,
# each starting mid-row
case('qconv_shift_odd', 1, 3, 5, [9, 11], [3, 5], dil=[2, 1], pads=[2, 2, 2, 2], seed=34)
case('qconv_shift_segments', 1, 64, 8, [30, 30], [3, 3], pads=[1, 1, 1, 1], seed=35)
# the depthwise path
case('qconv_depthwise_s2', 1, 12, 12, [15, 14], [3, 3], group=12, strides=[2, 2],
     pads=[1, 1, 1, 1], seed=8)
case('qconv_depthwise_5x5', 2, 7, 7, [11, 9], [5, 5], group=7, pads=[2, 2, 2, 2], relu=False,
     ydt=np.int8, seed=9)
case('qconv_depthwise_s3_dilated', 1, 19, 19, [23, 20], [3, 3], group=19, strides=[3, 2],
     dil=[2, 3], pads=[2, 0, 1, 3], seed=24)
case('qconv_depthwise_1d', 2, 9, 9, [100], [7], group=9, strides=[2], pads=[3, 2], ydt=np.int8,
     seed=25)
case('qconv_depthwise_3d', 1, 4, 4, [5, 6, 7], [3, 3, 3], group=4, strides=[1, 2, 1],
     pads=[1, 1, 1, 1, 1, 1], seed=26)
case('qconv_depthwise_batches', 1, 20, 20, [60, 70], [3, 3], group=20, pads=[1, 1, 1, 1],
     act=('Clip', 0.0, 6.0), y_scale=6 / 255, seed=27)
case('qconv_depthwise_1x1', 1, 5, 5, [8, 16], [1, 1], group=5, seed=28)
# a plane wide enough to be taken in several bands of rows, the last one
# reaching the bottom padding; three batches of channels, the last of one
case('qconv_depthwise_bands', 2, 33, 33, [50, 130], [3, 3], group=33, strides=[2, 2],
     pads=[1, 1, 1, 1], seed=32)
# a stride far beyond the input: one output column, no vast buffer
case('qconv_depthwise_wide_stride', 1, 4, 4, [9, 9], [3, 3], group=4, strides=[2, 100000000],
     pads=[1, 1, 1, 1], seed=31)
# a dilation far beyond the input with padding to match: the GEMM path,
# not a buffer of 2,000 padded rows
case('qconv_depthwise_wide_dilation', 1, 3, 3, [5, 5], [3, 3], group=3, dil=[1000, 1000],
     pads=[1000, 1000, 1000, 1000], seed=33)
# a fully connected layer: the Gemm as a 1x1 convolution
case('qgemm_relu', 3, 70, 45, [], [], gemm=True, seed=29)
case('qgemm_int8out', 1, 300, 20, [], [], gemm=True, relu=False, per_channel=False,
     bias=False, ydt=np.int8, seed=30)
# node by node: operands outside the 8-bit path
case('fallback_weight_zero_point', 1, 4, 5, [7, 7], [3, 3], pads=[1, 1, 1, 1], wzp=3, pow2=True,
     seed=10)
case('fallback_int8_input', 1, 4, 5, [7, 7], [3, 3], xdt=np.int8, pow2=True, seed=11)
# the residual join
qadd_case('qadd_relu', [1, 16, 9, 9], [1, 16, 9, 9], seed=20)
qadd_case('qadd_int8', [2, 3, 50, 70], [2, 3, 50, 70], relu=False, dt=np.int8, ydt=np.int8, seed=21)
qadd_case('qadd_int8_to_uint8', [300], [300], dt=np.int8, seed=22)
qadd_case('fallback_qadd_broadcast', [1, 8, 5, 5], [1, 8, 1, 1], seed=23)
