#!/usr/bin/env node
'use strict';
// time.js - times ONNX backend-test folders (DIR/model.onnx +
// DIR/test_data_set_0/input_N.pb) with ONNX Runtime through onnxruntime-node,
// with the protocol of `passnet time`: W untimed warm-up runs, then T timed
// runs; median, IQR and minimum in milliseconds.  When output_N.pb files are
// there too (bench/ort.sh writes passnet's outputs), ORT's outputs are
// compared with them.
//
//   node bench/ort/time.js [--trials T] [--warmup W] [--rtol R] [--atol A]
//                          [--no-profile] [--json] [--save-outputs]
//                          [--level disabled|basic|extended|all] DIR...
//
// --save-outputs writes ORT's outputs as DIR/ort_outputs/output_N.pb (in
// the order of the expected outputs; DIR/ort_outputs_LEVEL/ at another
// --level), for an oracle that explains a disagreement element by element
// (tests/cli/ort_explain.py).
//
// Session options: intraOpNumThreads 1, interOpNumThreads 1, sequential
// execution, graph optimisation level 'all' (ORT's default; --level), CPU
// provider.
//
// bench/ort.sh takes its headline ORT times from bench/ort/ort_time.c (ORT's
// C API, timed like `passnet time`): both Node times below inflate ORT's
// time on small graphs, and are printed beside it to show by how much.
//
// Two times are taken for each model, in two sessions:
//  - median_ms/iqr_ms/min_ms: ORT's own time for InferenceSession::Run, the
//    'model_run' events of its profiler (enableProfiling).  This is the
//    native run call, the counterpart of pn_session_run, without the Node
//    binding.  The profiler reports whole microseconds and adds its own
//    per-node bookkeeping to each run, both of which favour passnet slightly
//    for the smallest graphs.
//  - js_median_ms/js_iqr_ms/js_min_ms: wall time of `await session.run()`
//    in a session without profiling, i.e. what a Node user sees: it includes
//    the binding (setImmediate hop, tensor marshalling, output copies),
//    which is several microseconds per call.
// prof_js_median_ms is the same wall time in the profiled session, so the
// profiler's overhead can be estimated as prof_js_median_ms - js_median_ms.  Part of that
// overhead falls outside model_run, so it bounds the bias from above only.
const fs = require('fs');
const path = require('path');
const ort = require('onnxruntime-node');
const { readTensor, writeTensor, halfToNumber, bfloat16ToNumber } = require('./tensorproto');

const SESSION = {
  intraOpNumThreads: 1,
  interOpNumThreads: 1,
  executionMode: 'sequential',
  graphOptimizationLevel: 'all',
  executionProviders: ['cpu'],
};

function usage() {
  process.stderr.write('usage: node bench/ort/time.js [--trials T] [--warmup W] [--rtol R] [--atol A]\n' +
    '                         [--no-profile] [--json] [--save-outputs]\n' +
    '                         [--level disabled|basic|extended|all] DIR...\n');
  process.exit(2);
}

function parseArgs(argv) {
  const o = { trials: 10, warmup: 3, rtol: 1e-3, atol: 1e-5, profile: true, json: false, save: false, dirs: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const num = (lo) => {
      const v = Number(argv[++i]);
      if (!Number.isFinite(v) || v < lo) usage();
      return v;
    };
    if (a === '--trials') o.trials = num(1);
    else if (a === '--warmup') o.warmup = num(0);
    else if (a === '--rtol') o.rtol = num(0);
    else if (a === '--atol') o.atol = num(0);
    else if (a === '--no-profile') o.profile = false;
    else if (a === '--json') o.json = true;
    else if (a === '--save-outputs') o.save = true;
    else if (a === '--level') {
      const l = argv[++i];
      if (!['disabled', 'basic', 'extended', 'all'].includes(l)) usage();
      SESSION.graphOptimizationLevel = l;
    }
    else if (a === '-h' || a === '--help') usage();
    else if (a.startsWith('-')) usage();
    else o.dirs.push(a);
  }
  if (!o.dirs.length) usage();
  return o;
}

// Linear interpolation between order statistics, as `passnet time` does.
function quantile(sorted, q) {
  const pos = q * (sorted.length - 1);
  const lo = Math.floor(pos);
  const hi = Math.min(lo + 1, sorted.length - 1);
  return sorted[lo] + (pos - lo) * (sorted[hi] - sorted[lo]);
}

function stats(ms) {
  const s = [...ms].sort((a, b) => a - b);
  return { median: quantile(s, 0.5), iqr: quantile(s, 0.75) - quantile(s, 0.25), min: s[0] };
}

function readPbFiles(dir, stem) {
  const out = [];
  for (let i = 0; ; i++) {
    const f = path.join(dir, `${stem}_${i}.pb`);
    if (!fs.existsSync(f)) return out;
    out.push(readTensor(fs.readFileSync(f)));
  }
}

// input_N feeds the session's N-th input unless it names one of them.
function makeFeeds(session, inputs) {
  const feeds = {};
  inputs.forEach((t, i) => {
    const name = session.inputNames.includes(t.name) ? t.name : session.inputNames[i];
    if (name === undefined) throw new Error(`input_${i}.pb: the model has ${session.inputNames.length} inputs`);
    feeds[name] = new ort.Tensor(t.type, t.data, t.dims);
  });
  return feeds;
}

async function timeRuns(session, feeds, o) {
  let last;
  for (let i = 0; i < o.warmup; i++) last = await session.run(feeds);
  const ms = [];
  for (let i = 0; i < o.trials; i++) {
    const t0 = process.hrtime.bigint();
    last = await session.run(feeds);
    ms.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  return { ms, last };
}

function asNumbers(type, data) {
  if (type === 'float16') return Array.from(data, halfToNumber);
  if (type === 'bfloat16') return Array.from(data, bfloat16ToNumber);
  return Array.from(data, Number);
}

// |got - want| <= atol + rtol * |want|, NaN equal to NaN, infinities to
// themselves; max_rel is over elements whose reference is not zero,
// max_rel_above_atol over those whose reference exceeds atol (where a
// relative difference says something about the kernel, not about a value
// that is zero up to rounding).
function compare(got, want, o) {
  const r = { maxAbs: 0, maxRel: 0, maxRelAboveAtol: 0, bad: 0, what: '' };
  if (got.dims.length !== want.dims.length || got.dims.some((d, i) => d !== want.dims[i])) {
    r.what = `shape [${got.dims}] vs [${want.dims}]`;
    r.bad = -1;
    return r;
  }
  const g = asNumbers(got.type, got.data);
  const w = asNumbers(want.type, want.data);
  for (let i = 0; i < w.length; i++) {
    const a = g[i];
    const b = w[i];
    if (Number.isNaN(a) && Number.isNaN(b)) continue;
    if (a === b) continue;
    const d = Math.abs(a - b);
    if (!Number.isFinite(d)) {
      r.bad++;
      r.maxAbs = Infinity;
      continue;
    }
    r.maxAbs = Math.max(r.maxAbs, d);
    if (b !== 0) r.maxRel = Math.max(r.maxRel, d / Math.abs(b));
    if (Math.abs(b) > o.atol) r.maxRelAboveAtol = Math.max(r.maxRelAboveAtol, d / Math.abs(b));
    if (d > o.atol + o.rtol * Math.abs(b)) r.bad++;
  }
  if (r.bad) r.what = `${r.bad} of ${w.length} elements differ`;
  return r;
}

function check(session, outputs, expected, o) {
  const res = { maxAbs: 0, maxRel: 0, maxRelAboveAtol: 0, agree: true, what: '' };
  expected.forEach((want, i) => {
    const name = session.outputNames.includes(want.name) ? want.name : session.outputNames[i];
    const got = outputs[name];
    if (!got) {
      res.agree = false;
      res.what = `no output ${name}`;
      return;
    }
    const c = compare({ type: got.type, dims: got.dims, data: got.data }, want, o);
    res.maxAbs = Math.max(res.maxAbs, c.maxAbs);
    res.maxRel = Math.max(res.maxRel, c.maxRel);
    res.maxRelAboveAtol = Math.max(res.maxRelAboveAtol, c.maxRelAboveAtol);
    if (c.bad) {
      res.agree = false;
      res.what = res.what || `output ${i} (${name}): ${c.what}`;
    }
  });
  return res;
}

// ORT's outputs as DIR/ort_outputs/output_N.pb (ort_outputs_LEVEL/ at a
// level other than 'all'), N the expected output's index, so an oracle can
// pair them with test_data_set_0/output_N.pb.
function saveOutputs(dir, session, outputs, expected) {
  const level = SESSION.graphOptimizationLevel;
  const out = path.join(dir, level === 'all' ? 'ort_outputs' : `ort_outputs_${level}`);
  fs.mkdirSync(out, { recursive: true });
  expected.forEach((want, i) => {
    const name = session.outputNames.includes(want.name) ? want.name : session.outputNames[i];
    const got = outputs[name];
    if (got) fs.writeFileSync(path.join(out, `output_${i}.pb`), writeTensor({ name, type: got.type, dims: got.dims, data: got.data }));
  });
}

// ORT's profiler time of each run call: the last `trials` model_run events
// (the first ones are the warm-up runs).
async function profiledRuns(file, inputs, o, tmp) {
  const session = await ort.InferenceSession.create(file, {
    ...SESSION, enableProfiling: true, profileFilePrefix: path.join(tmp, 'ort_profile'),
  });
  const { ms } = await timeRuns(session, makeFeeds(session, inputs), o);
  session.endProfiling();
  await session.release();
  const files = fs.readdirSync(tmp).filter((f) => f.startsWith('ort_profile'));
  if (files.length !== 1) throw new Error(`expected one profile file, found ${files.length}`);
  const pf = path.join(tmp, files[0]);
  const events = JSON.parse(fs.readFileSync(pf, 'utf8'));
  fs.unlinkSync(pf);
  const runs = events.filter((e) => e.name === 'model_run').map((e) => e.dur / 1e3);
  if (runs.length < o.trials) throw new Error(`profile has ${runs.length} model_run events`);
  return { native: stats(runs.slice(-o.trials)), js: stats(ms) };
}

async function timeOne(dir, o, tmp) {
  const st = fs.statSync(dir);
  const file = st.isDirectory() ? path.join(dir, 'model.onnx') : dir;
  const setDir = path.join(path.dirname(file), 'test_data_set_0');
  const inputs = fs.existsSync(setDir) ? readPbFiles(setDir, 'input') : [];
  const expected = fs.existsSync(setDir) ? readPbFiles(setDir, 'output') : [];
  const session = await ort.InferenceSession.create(file, SESSION);
  if (inputs.length < session.inputNames.length) {
    throw new Error(`${session.inputNames.length} inputs, ${inputs.length} input_N.pb files`);
  }
  const { ms, last } = await timeRuns(session, makeFeeds(session, inputs), o);
  const cmp = expected.length ? check(session, last, expected, o) : null;
  if (o.save && expected.length) saveOutputs(path.dirname(file), session, last, expected);
  await session.release();
  const js = stats(ms);
  const rec = { path: dir, trials: o.trials, threads: 1 };
  if (o.profile) {
    const p = await profiledRuns(file, inputs, o, tmp);
    Object.assign(rec, { median_ms: p.native.median, iqr_ms: p.native.iqr, min_ms: p.native.min });
    rec.prof_js_median_ms = p.js.median;
  }
  Object.assign(rec, { js_median_ms: js.median, js_iqr_ms: js.iqr, js_min_ms: js.min });
  if (cmp) Object.assign(rec, { agree: cmp.agree, max_abs: cmp.maxAbs, max_rel: cmp.maxRel,
    max_rel_above_atol: cmp.maxRelAboveAtol, diff: cmp.what || undefined });
  return rec;
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  ort.env.logLevel = 'error';
  const tmp = fs.mkdtempSync(path.join(require('os').tmpdir(), 'ort-time-'));
  let failed = 0;
  for (const dir of o.dirs) {
    let rec;
    try {
      rec = await timeOne(dir, o, tmp);
    } catch (e) {
      failed++;
      const msg = String(e && e.message ? e.message : e).split('\n')[0];
      if (o.json) console.log(JSON.stringify({ path: dir, error: msg }));
      else process.stderr.write(`ort: ${dir}: ${msg}\n`);
      continue;
    }
    if (o.json) console.log(JSON.stringify(rec));
    else {
      const m = o.profile ? rec.median_ms : rec.js_median_ms;
      const q = o.profile ? rec.iqr_ms : rec.js_iqr_ms;
      console.log(`${m.toFixed(6)} ${q.toFixed(6)} ${rec.trials} ${dir}`);
    }
  }
  fs.rmSync(tmp, { recursive: true, force: true });
  process.exitCode = failed ? 1 : 0;
}

main().catch((e) => {
  process.stderr.write(`ort: ${e.stack || e}\n`);
  process.exit(1);
});
