#!/usr/bin/env python3
# ops_seq_cases.py OUTDIR - writes ONNX backend-test style cases (model.onnx
# + test_data_set_0/) for the sequence, control-flow, recurrent, signal,
# loss and text ops, covering attributes the ONNX node tests leave out.
# Expected outputs come from numpy; used by tests/cli/ops_seq.sh.
import os
import shutil
import sys

import numpy as np
import onnx
from onnx import TensorProto as TP
from onnx import helper as h
from onnx import numpy_helper as nh
from onnx.backend.test.case.node.negativeloglikelihoodloss import \
    compute_negative_log_likelihood_loss as nllref
from onnx.backend.test.case.node.softmaxcrossentropy import softmaxcrossentropy

ROOT = sys.argv[1]
N = h.make_node
F = TP.FLOAT


def ttype(a):
    elem = TP.STRING if a.dtype == object else onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[a.dtype]
    return h.make_tensor_type_proto(elem, None)


def vtype(v):
    """Type of a value: a numpy array, or a list of them (a sequence)."""
    if isinstance(v, list):
        return h.make_sequence_type_proto(ttype(v[0] if v else np.zeros(0, np.float32)))
    return ttype(v)


def pb(v, name):
    return nh.from_list(v, name) if isinstance(v, list) else nh.from_array(v, name)


def mk(name, nodes, ins, outs, opset=17):
    """One case: a graph of nodes, inputs/outputs as (name, value) pairs."""
    d = os.path.join(ROOT, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d + '/test_data_set_0')
    gi = [h.make_value_info(n, vtype(v)) for n, v in ins]
    go = [h.make_value_info(n, vtype(v)) for n, v in outs]
    m = h.make_model(h.make_graph(nodes, name, gi, go),
                     opset_imports=[h.make_opsetid('', opset)])
    m.ir_version = 8
    onnx.save(m, d + '/model.onnx')
    for kind, vals in (('input', ins), ('output', outs)):
        for i, (n, v) in enumerate(vals):
            with open(d + f'/test_data_set_0/{kind}_{i}.pb', 'wb') as f:
                f.write(pb(v, n).SerializeToString())


# --- seq ---

rand = np.random.default_rng(4).random
x = np.arange(2*7*3, dtype=np.float32).reshape(2, 7, 3)
mk('seq_split_scalar', [N('SplitToSequence', ['x', 's'], ['y'], axis=1)],
   [('x', x), ('s', np.array(3, np.int64))], [('y', [x[:, 0:3], x[:, 3:6], x[:, 6:7]])])
mk('seq_split_1d', [N('SplitToSequence', ['x', 's'], ['y'], axis=-1)],
   [('x', x), ('s', np.array([1, 2], np.int32))], [('y', [x[..., 0:1], x[..., 1:3]])])
mk('seq_split_nokeep', [N('SplitToSequence', ['x'], ['y'], axis=0, keepdims=0)],
   [('x', x)], [('y', [x[0], x[1]])])
mk('seq_split_keep', [N('SplitToSequence', ['x'], ['y'], axis=0)],
   [('x', x)], [('y', [x[0:1], x[1:2]])])
s = np.array([['a', 'bb', 'c'], ['d', 'e', 'ff']], dtype=object)
mk('seq_split_str', [N('SplitToSequence', ['x'], ['y'], axis=1, keepdims=0), N('ConcatFromSequence', ['y'], ['z'], axis=0, new_axis=1)],
   [('x', s)], [('z', s.T.copy())])
a, b = rand((2, 3)).astype(np.float32), rand((2, 5)).astype(np.float32)
mk('seq_concat', [N('ConcatFromSequence', ['s'], ['y'], axis=-1)], [('s', [a, b])], [('y', np.concatenate([a, b], 1))])
c = rand((2, 3)).astype(np.float32)
mk('seq_stack', [N('ConcatFromSequence', ['s'], ['y'], axis=-1, new_axis=1)], [('s', [a, c])], [('y', np.stack([a, c], -1))])
mk('seq_erase_neg', [N('SequenceErase', ['s', 'p'], ['y'])], [('s', [a, b, c]), ('p', np.array(-2, np.int64))], [('y', [a, c])])
mk('seq_erase_last', [N('SequenceErase', ['s'], ['y'])], [('s', [a, b, c])], [('y', [a, b])])
mk('seq_at_neg', [N('SequenceAt', ['s', 'p'], ['y'])], [('s', [a, b, c]), ('p', np.array(-3, np.int32))], [('y', a)])
mk('seq_insert_mid', [N('SequenceInsert', ['s', 't', 'p'], ['y'])], [('s', [a, b]), ('t', c), ('p', np.array(-1, np.int64))], [('y', [a, c, b])])
mk('seq_empty_len', [N('SequenceEmpty', [], ['e'], dtype=7), N('SequenceInsert', ['e', 't'], ['s']), N('SequenceLength', ['s'], ['y'])],
   [('t', np.array([1, 2], np.int64))], [('y', np.array(1, np.int64))])
mk('seq_construct_len', [N('SequenceConstruct', ['a', 'b', 'c'], ['s']), N('SequenceLength', ['s'], ['y']), N('SequenceAt', ['s', 'y1'], ['z'])],
   [('a', a), ('b', b), ('c', c), ('y1', np.array(1, np.int64))], [('y', np.array(3, np.int64)), ('z', b)])


# --- ctl ---

def vi(n, t=F, shape=None): return h.make_tensor_value_info(n, t, shape)
# Scan 9: state s[2]; scan input x [2,4,... axis=1 reversed]; outputs: sum state and y (axis 1, reversed output)
body = h.make_graph([N('Add', ['s_in', 'x_t'], ['s_out']), N('Identity', ['s_out'], ['y_t'])], 'b',
                    [vi('s_in', F, [2]), vi('x_t', F, [2])], [vi('s_out', F, [2]), vi('y_t', F, [2])])
x = rand((2, 5)).astype(np.float32)
s0 = np.array([1, 2], np.float32)
st = s0.copy(); ys = []
for t in range(5):
    st = st + x[:, 4 - t]; ys.append(st.copy())
ys = np.stack(ys, 1)  # output axis 1
ys_rev = ys[:, ::-1]
mk('scan9_axes_dirs', [N('Scan', ['s0', 'x'], ['s', 'y'], body=body, num_scan_inputs=1, scan_input_axes=[1], scan_input_directions=[1],
                         scan_output_axes=[-1], scan_output_directions=[1])],
   [('s0', s0), ('x', x)], [('s', st), ('y', ys_rev.copy())], opset=16)
# Scan 8 with sequence_lens and reverse
body8 = h.make_graph([N('Add', ['s_in', 'x_t'], ['s_out']), N('Identity', ['s_out'], ['y_t'])], 'b',
                     [vi('s_in', F, [3]), vi('x_t', F, [3])], [vi('s_out', F, [3]), vi('y_t', F, [3])])
B, T = 2, 4
x = rand((B, T, 3)).astype(np.float32)
s0 = rand((B, 3)).astype(np.float32)
lens = np.array([4, 2], np.int64)
S = np.zeros((B, 3), np.float32); Y = np.zeros((B, T, 3), np.float32)
for b in range(B):
    st = s0[b].copy()
    for t in range(lens[b]):
        st = st + x[b, lens[b] - 1 - t]; Y[b, t] = st
    S[b] = st
mk('scan8_lens_rev', [N('Scan', ['lens', 's0', 'x'], ['s', 'y'], body=body8, num_scan_inputs=1, directions=[1])],
   [('lens', lens), ('s0', s0), ('x', x)], [('s', S), ('y', Y)], opset=8)
# Loop: M only, scan output, carried value
lb = h.make_graph([N('Identity', ['c_in'], ['c_out']), N('Add', ['v_in', 'one'], ['v_out']), N('Identity', ['v_in'], ['sc'])], 'lb',
                  [vi('i', TP.INT64, []), vi('c_in', TP.BOOL, []), vi('v_in', F, [2])], [vi('c_out', TP.BOOL, []), vi('v_out', F, [2]), vi('sc', F, [2])])
v0 = np.array([0, 10], np.float32); one = np.array(1, np.float32)
mk('loop_m_only', [N('Loop', ['M', '', 'v0'], ['v', 'scan'], body=lb)], [('M', np.array(3, np.int64)), ('v0', v0), ('one', one)],
   [('v', v0 + 3), ('scan', np.stack([v0, v0 + 1, v0 + 2]))], opset=13)
mk('loop_zero', [N('Loop', ['M', 'c', 'v0'], ['v', 'scan'], body=lb)], [('M', np.array(0, np.int64)), ('c', np.array(True)), ('v0', v0), ('one', one)],
   [('v', v0), ('scan', np.zeros((0, 2), np.float32))], opset=13)
# Loop with cond from body: stop when iter >= 2 (cond_out = Less(i, 2))? use Cast(i) trick: cond_out = Not? keep via Identity of cond: do-while with M big
mk('loop_cond_false', [N('Loop', ['M', 'c', 'v0'], ['v', 'scan'], body=lb)], [('M', np.array(5, np.int64)), ('c', np.array(False)), ('v0', v0), ('one', one)],
   [('v', v0), ('scan', np.zeros((0, 2), np.float32))], opset=13)
# If with outer capture
tb = h.make_graph([N('Add', ['a', 'a'], ['r'])], 't', [], [vi('r', F, [2])])
eb = h.make_graph([N('Identity', ['a'], ['r2'])], 'e', [], [vi('r2', F, [2])])
a = np.array([1, 2], np.float32)
mk('if_capture_t', [N('If', ['c'], ['y'], then_branch=tb, else_branch=eb)], [('c', np.array([True])), ('a', a)], [('y', a + a)], opset=13)
mk('if_capture_e', [N('If', ['c'], ['y'], then_branch=tb, else_branch=eb)], [('c', np.array(False)), ('a', a)], [('y', a)], opset=13)
# nested: Loop body containing If that captures outer graph value
ib_t = h.make_graph([N('Add', ['v_in', 'one'], ['r'])], 't', [], [vi('r', F, [2])])
ib_e = h.make_graph([N('Add', ['v_in', 'two'], ['r'])], 'e', [], [vi('r', F, [2])])
lb2 = h.make_graph([N('Identity', ['c_in'], ['c_out']), N('If', ['flag'], ['v_out'], then_branch=ib_t, else_branch=ib_e)], 'lb',
                   [vi('i', TP.INT64, []), vi('c_in', TP.BOOL, []), vi('v_in', F, [2])], [vi('c_out', TP.BOOL, []), vi('v_out', F, [2])])
mk('loop_nested_if', [N('Loop', ['M', '', 'v0'], ['v'], body=lb2)],
   [('M', np.array(4, np.int64)), ('v0', v0), ('one', one), ('two', np.array(2, np.float32)), ('flag', np.array(False))], [('v', v0 + 8)], opset=13)
# SequenceMap with tensor additional input and two outputs
smb = h.make_graph([N('Add', ['x', 'b'], ['y']), N('Shape', ['x'], ['sh'])], 'sm', [vi('x', F, None), vi('b', F, None)], [vi('y', F, None), vi('sh', TP.INT64, None)])
xs = [rand(2).astype(np.float32), rand((3, 2)).astype(np.float32)]
bb = np.array([1, 2], np.float32)
mk('seqmap_two_out', [N('SequenceMap', ['xs', 'b'], ['ys', 'shs'], body=smb)], [('xs', xs), ('b', bb)],
   [('ys', [x + bb for x in xs]), ('shs', [np.array(x.shape, np.int64) for x in xs])], opset=17)


# --- rnn ---

rng = np.random.default_rng(0)
sig = lambda x: 1 / (1 + np.exp(-x))
ACT = {'Sigmoid': lambda x, a, b: sig(x), 'Tanh': lambda x, a, b: np.tanh(x), 'Relu': lambda x, a, b: np.maximum(x, 0),
       'LeakyRelu': lambda x, a, b: np.where(x >= 0, x, a * x), 'HardSigmoid': lambda x, a, b: np.clip(a * x + b, 0, 1),
       'ScaledTanh': lambda x, a, b: a * np.tanh(b * x), 'Affine': lambda x, a, b: a * x + b}
def ref(cell, X, W, R, B, lens, h0, c0, P, direction, acts, clip, lbr, inf):
    S, Bt, I = X.shape; nd = W.shape[0]; G = {'RNN': 1, 'GRU': 3, 'LSTM': 4}[cell]; H = W.shape[1] // G
    Y = np.zeros((S, nd, Bt, H)); Yh = np.zeros((nd, Bt, H)); Yc = np.zeros((nd, Bt, H))
    cl = (lambda v: np.clip(v, -clip, clip)) if clip else (lambda v: v)
    na = {'RNN': 1, 'GRU': 2, 'LSTM': 3}[cell]
    for d in range(nd):
        rev = direction == 'reverse' or d == 1
        f = acts[d * na:(d + 1) * na]
        A = [lambda x, e=e: ACT[e[0]](x, e[1], e[2]) for e in f]
        Wb = B[d, :G * H] if B is not None else np.zeros(G * H); Rb = B[d, G * H:] if B is not None else np.zeros(G * H)
        for b in range(Bt):
            L = lens[b] if lens is not None else S
            hh = h0[d, b].astype(np.float64) if h0 is not None else np.zeros(H)
            cc = c0[d, b].astype(np.float64) if c0 is not None else np.zeros(H)
            for t in range(L):
                tm = L - 1 - t if rev else t
                x = X[tm, b]
                if cell == 'RNN':
                    hh = A[0](cl(W[d] @ x + R[d] @ hh + Wb + Rb))
                elif cell == 'GRU':
                    Wz, Wr, Wh = np.split(W[d], 3); Rz, Rr, Rh = np.split(R[d], 3)
                    bz, br, bh = np.split(Wb, 3); rz, rr, rh = np.split(Rb, 3)
                    z = A[0](cl(Wz @ x + Rz @ hh + bz + rz)); r = A[0](cl(Wr @ x + Rr @ hh + br + rr))
                    if lbr: ht = A[1](cl(Wh @ x + r * (Rh @ hh + rh) + bh))
                    else: ht = A[1](cl(Wh @ x + Rh @ (r * hh) + rh + bh))
                    hh = (1 - z) * ht + z * hh
                else:
                    Wi, Wo, Wf, Wc = np.split(W[d], 4); Ri, Ro, Rf, Rc = np.split(R[d], 4)
                    bs = np.split(Wb + Rb, 4)
                    pi, po, pf = np.split(P[d], 3) if P is not None else (0, 0, 0)
                    ft = A[0](cl(Wf @ x + Rf @ hh + pf * cc + bs[2]))
                    it = 1 - ft if inf else A[0](cl(Wi @ x + Ri @ hh + pi * cc + bs[0]))
                    ct = A[1](cl(Wc @ x + Rc @ hh + bs[3]))
                    cc = ft * cc + it * ct
                    ot = A[0](cl(Wo @ x + Ro @ hh + po * cc + bs[1]))
                    hh = ot * A[2](cc)
                Y[tm, d, b] = hh
            Yh[d, b] = hh; Yc[d, b] = cc
    return Y, Yh, Yc
def case(name, cell, S=4, Bt=3, I=5, H=6, direction='forward', lens=None, h0=False, c0=False, P=False, bias=True,
         acts=None, clip=0, lbr=0, inf=0, layout=0, dtype=np.float32, nout=None):
    nd = 2 if direction == 'bidirectional' else 1; G = {'RNN': 1, 'GRU': 3, 'LSTM': 4}[cell]
    X = rng.standard_normal((S, Bt, I)).astype(dtype); W = (0.5 * rng.standard_normal((nd, G * H, I))).astype(dtype)
    R = (0.5 * rng.standard_normal((nd, G * H, H))).astype(dtype)
    Bv = rng.standard_normal((nd, 2 * G * H)).astype(dtype) if bias else None
    H0 = rng.standard_normal((nd, Bt, H)).astype(dtype) if h0 else None
    C0 = rng.standard_normal((nd, Bt, H)).astype(dtype) if c0 else None
    Pv = rng.standard_normal((nd, 3 * H)).astype(dtype) if P else None
    L = np.array(lens, np.int32) if lens is not None else None
    defa = {'RNN': [('Tanh', 0, 0)], 'GRU': [('Sigmoid', 0, 0), ('Tanh', 0, 0)], 'LSTM': [('Sigmoid', 0, 0), ('Tanh', 0, 0), ('Tanh', 0, 0)]}[cell]
    al = acts if acts else defa * nd
    Y, Yh, Yc = ref(cell, X.astype(np.float64), W.astype(np.float64), R.astype(np.float64), None if Bv is None else Bv.astype(np.float64), L,
                    H0, C0, None if Pv is None else Pv.astype(np.float64), direction, al, clip, lbr, inf)
    attrs = dict(hidden_size=H, direction=direction)
    if acts:
        attrs['activations'] = [a[0] for a in acts]
        alphas = [a[1] for a in acts if a[0] in ('LeakyRelu', 'HardSigmoid', 'ScaledTanh', 'Affine')]
        betas = [a[2] for a in acts if a[0] in ('HardSigmoid', 'ScaledTanh', 'Affine')]
        if alphas: attrs['activation_alpha'] = alphas
        if betas: attrs['activation_beta'] = betas
    if clip: attrs['clip'] = clip
    if lbr: attrs['linear_before_reset'] = 1
    if inf: attrs['input_forget'] = 1
    if layout:
        attrs['layout'] = 1
        X = X.transpose(1, 0, 2).copy(); Y = Y.transpose(2, 0, 1, 3); Yh = Yh.transpose(1, 0, 2); Yc = Yc.transpose(1, 0, 2)
        H0 = None if H0 is None else H0.transpose(1, 0, 2).copy(); C0 = None if C0 is None else C0.transpose(1, 0, 2).copy()
    ins = [('X', X), ('W', W), ('R', R)]; names = ['X', 'W', 'R']
    for nm, v in [('B', Bv), ('L', L), ('H0', H0), ('C0', C0), ('P', Pv)]:
        if cell != 'LSTM' and nm in ('C0', 'P'): continue
        if v is not None: ins.append((nm, v)); names.append(nm)
        else: names.append('')
    while names[-1] == '': names.pop()
    outs = [('Y', Y.astype(dtype)), ('Yh', Yh.astype(dtype))] + ([('Yc', Yc.astype(dtype))] if cell == 'LSTM' else [])
    if nout: outs = outs[:nout]
    mk(name, [N(cell, names, [o[0] for o in outs], **attrs)], ins, outs, opset=14)
case('rnn_bidir', 'RNN', direction='bidirectional', h0=True)
case('rnn_rev_lens', 'RNN', direction='reverse', lens=[4, 2, 0])
case('rnn_acts', 'RNN', direction='bidirectional', acts=[('LeakyRelu', 0.3, 0), ('ScaledTanh', 0.7, 1.3)], clip=1.5)
case('gru_bidir_lens', 'GRU', direction='bidirectional', lens=[3, 4, 1], h0=True)
case('gru_lbr', 'GRU', lbr=1, h0=True)
case('gru_lbr_rev', 'GRU', lbr=1, direction='reverse', lens=[1, 4, 2])
case('gru_layout1', 'GRU', direction='bidirectional', layout=1, h0=True, lbr=1)
case('gru_acts', 'GRU', acts=[('HardSigmoid', 0.3, 0.4), ('Affine', 0.5, 0.1)])
case('lstm_bidir_peep', 'LSTM', direction='bidirectional', P=True, h0=True, c0=True, lens=[2, 4, 3])
case('lstm_inforget_clip', 'LSTM', inf=1, clip=0.8, P=True)
case('lstm_layout1', 'LSTM', direction='reverse', layout=1, h0=True, c0=True, lens=[4, 1, 3])
case('lstm_f64', 'LSTM', dtype=np.float64, h0=True)
case('lstm_f16', 'LSTM', dtype=np.float16, bias=False)
case('lstm_yonly', 'LSTM', nout=1)


# --- sig ---

rng = np.random.default_rng(1)
def cplx(y, dt): return np.stack([y.real, y.imag], -1).astype(dt)
def dft(name, shape, axis, complex_in=False, n=None, onesided=0, inverse=0, dt=np.float32):
    x = rng.standard_normal(shape + ((2,) if complex_in else (1,))).astype(dt).astype(np.float64)
    xc = x[..., 0] + (1j * x[..., 1] if complex_in else 0)
    ax = axis if axis >= 0 else axis + len(shape) + 1
    f = np.fft.ifft if inverse else np.fft.fft
    y = f(xc, n=n, axis=ax)
    if onesided: y = np.take(y, np.arange(y.shape[ax] // 2 + 1), axis=ax)
    ins = [('x', x.astype(dt))] + ([('n', np.array(n, np.int64))] if n else [])
    attrs = dict(axis=axis, onesided=onesided, inverse=inverse)
    mk(name, [N('DFT', ['x'] + (['n'] if n else []), ['y'], **attrs)], ins, [('y', cplx(y, dt))], opset=17)
dft('dft_pow2_pad', (2, 6, 3), 1, n=8)
dft('dft_trunc', (2, 9, 3), 1, n=5)
dft('dft_onesided', (3, 16), 1, onesided=1)
dft('dft_onesided_odd', (3, 7, 2), 1, onesided=1)
dft('dft_complex_neg', (2, 3, 12), -2, complex_in=True)
dft('dft_inv_pow2', (2, 32), 1, complex_in=True, inverse=1)
dft('dft_f64', (2, 10, 4), 2, dt=np.float64, complex_in=True)
dft('dft_big_pow2', (64, 1024), 1)
dft('dft_big_odd', (64, 300), 1, complex_in=True)
def stft(name, B, L, step, flen=None, win=None, onesided=1, complex_in=False, dt=np.float32):
    x = rng.standard_normal((B, L, 2 if complex_in else 1)).astype(dt).astype(np.float64)
    xc = x[..., 0] + (1j * x[..., 1] if complex_in else 0)
    fl = flen if flen else len(win)
    w = win if win is not None else np.ones(fl)
    nf = (L - fl) // step + 1
    bins = fl // 2 + 1 if onesided else fl
    y = np.zeros((B, nf, bins), complex)
    for b in range(B):
        for f in range(nf):
            y[b, f] = np.fft.fft(xc[b, f * step:f * step + fl] * w)[:bins]
    ins = [('x', x.astype(dt)), ('s', np.array(step, np.int64))]
    names = ['x', 's', '', '']
    if win is not None: ins.append(('w', np.asarray(win).astype(dt))); names[2] = 'w'
    if flen: ins.append(('fl', np.array(flen, np.int64))); names[3] = 'fl'
    while names[-1] == '': names.pop()
    mk(name, [N('STFT', names, ['y'], onesided=onesided)], ins, [('y', cplx(y, dt))], opset=17)
stft('stft_complex_full', 2, 50, 7, flen=10, onesided=0, complex_in=True)
stft('stft_win_len', 3, 64, 5, flen=12, win=np.hanning(12))
stft('stft_f64', 1, 40, 3, win=np.hamming(9), dt=np.float64)


# --- loss ---

rng = np.random.default_rng(2)
x = rng.standard_normal((3, 5, 4)).astype(np.float64); t = rng.integers(0, 5, (3, 4)).astype(np.int64); t[0, 0] = -1
w = rng.random(5).astype(np.float64)
l, lp = softmaxcrossentropy(x, t, w, 'mean', -1, True)
mk('sce_f64', [N('SoftmaxCrossEntropyLoss', ['x', 't', 'w'], ['l', 'lp'], ignore_index=-1)], [('x', x), ('t', t), ('w', w)], [('l', np.array(l, np.float64)), ('lp', lp.astype(np.float64))], opset=13)
xh = x.astype(np.float16)
l = softmaxcrossentropy(xh.astype(np.float32), t, None, 'sum', -1)
mk('sce_f16_sum', [N('SoftmaxCrossEntropyLoss', ['x', 't'], ['l'], ignore_index=-1, reduction='sum')], [('x', xh), ('t', t)], [('l', np.array(l, np.float16))], opset=13)
x2 = rng.standard_normal((6, 4)).astype(np.float32); t2 = rng.integers(0, 4, (6,)).astype(np.int32)
mk('nll_nc_sum', [N('NegativeLogLikelihoodLoss', ['x', 't'], ['l'], reduction='sum')], [('x', x2), ('t', t2)], [('l', np.array(nllref(x2, t2, None, 'sum'), np.float32))], opset=13)


# --- text ---

def tfidf_ref(X, pool, counts, idx, mn, mx, skip, mode, w=None):
    grams = []
    for j, lo in enumerate(counts):
        hi = counts[j + 1] if j + 1 < len(counts) else len(pool)
        for p in range(lo, hi, j + 1): grams.append(tuple(pool[p:p + j + 1]))
    size = max(idx) + 1
    rows = X if X.ndim == 2 else X[None]
    Y = np.zeros((len(rows), size), np.float32)
    for r, row in enumerate(rows):
        row = list(row)
        for n in range(mn, mx + 1):
            for s in ([1] if n == 1 else range(1, skip + 2)):
                for i in range(len(row)):
                    if i + (n - 1) * s >= len(row): break
                    g = tuple(row[i + k * s] for k in range(n))
                    if g in grams: Y[r, idx[grams.index(g)]] += 1
        for j in range(size):
            wt = w[j] if w is not None else 1
            if mode == 'IDF': Y[r, j] = wt if Y[r, j] > 0 else 0
            elif mode == 'TFIDF': Y[r, j] *= wt
    return Y if X.ndim == 2 else Y[0]
rng = np.random.default_rng(3)
words = ['a', 'b', 'c', 'dd', 'e']
X = np.array([[rng.choice(words) for _ in range(12)] for _ in range(3)], dtype=object)
pool = ['a', 'b', 'dd', 'a', 'b', 'c', 'e', 'b', 'a', 'a', 'b', 'c']
counts = [0, 3, 9]; idx = [4, 3, 2, 1, 0, 5, 6]
w = np.array([0.5, 1.5, 2.0, 3.0, 0.25, 4.0, 5.0], np.float32)
for mode in ['TF', 'IDF', 'TFIDF']:
    Y = tfidf_ref(X, pool, counts, idx, 1, 3, 2, mode, w)
    mk('tfidf_str_' + mode, [N('TfIdfVectorizer', ['x'], ['y'], mode=mode, min_gram_length=1, max_gram_length=3, max_skip_count=2,
        ngram_counts=counts, ngram_indexes=idx, pool_strings=pool, weights=w.tolist())], [('x', X)], [('y', Y)], opset=9)
Xi = rng.integers(0, 5, 20).astype(np.int64)
pooli = [1, 2, 3, 1, 2, 3, 4]
Y = tfidf_ref(Xi, pooli, [0, 1], [0, 1, 2, 3], 2, 3, 3, 'TF')
mk('tfidf_int_tri', [N('TfIdfVectorizer', ['x'], ['y'], mode='TF', min_gram_length=2, max_gram_length=3, max_skip_count=3,
    ngram_counts=[0, 1], ngram_indexes=[0, 1, 2, 3], pool_int64s=pooli)], [('x', Xi)], [('y', Y)], opset=9)
S = np.array(['Hello', 'WORLD', 'the', 'The', 'ünïcode'], dtype=object)
mk('strnorm_lower_ci', [N('StringNormalizer', ['x'], ['y'], case_change_action='LOWER', stopwords=['THE'])], [('x', S)],
   [('y', np.array(['hello', 'world', 'ünïcode'], dtype=object))], opset=10)
mk('strnorm_upper_cs', [N('StringNormalizer', ['x'], ['y'], case_change_action='UPPER', is_case_sensitive=1, stopwords=['The'])], [('x', S[None])],
   [('y', np.array([['HELLO', 'WORLD', 'THE', 'üNïCODE'.upper().replace('Ü','ü').replace('Ï','ï')]], dtype=object))], opset=10)
