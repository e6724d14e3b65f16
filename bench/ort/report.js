#!/usr/bin/env node
'use strict';
// report.js - the summary of bench/ort.sh: joins the records of
// `passnet time --json`, build/bench/ort_time (ORT's C API) and
// bench/ort/time.js (ORT through Node) by path (each case folder is named
// after its subgraph hash) and prints the passnet/ORT time ratios, the
// worst cases with their ops, and the output comparison.
//
//   node bench/ort/report.js SUBGRAPHS.jsonl PASSNET.jsonl ORT_C.jsonl ORT_NODE.jsonl [FAILURES.txt]
//
// The headline ratios use ORT's C API times: the same timed region and
// clock as passnet's.  The Node figures are printed beside them to show how
// much the way of timing ORT moves the answer.
// SUBGRAPHS.jsonl is `passnet ls --subgraphs --json` (for the ops of each
// hash); FAILURES.txt holds "stage<TAB>hash<TAB>reason" lines of cases that
// never reached the timing (export refused, passnet run failed).
const fs = require('fs');
const path = require('path');

const SMALL_MS = 0.010;   // the "under 10 us on ORT" class of the issue
const DENSE = new Set(['Conv', 'ConvTranspose', 'ConvInteger', 'QLinearConv', 'MatMul', 'MatMulInteger',
  'QLinearMatMul', 'Gemm', 'Einsum']);

function jsonl(file) {
  return fs.readFileSync(file, 'utf8').split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l));
}

function quantile(sorted, q) {
  if (!sorted.length) return NaN;
  const pos = q * (sorted.length - 1);
  const lo = Math.floor(pos);
  const hi = Math.min(lo + 1, sorted.length - 1);
  return sorted[lo] + (pos - lo) * (sorted[hi] - sorted[lo]);
}

// Geometric mean and geometric standard deviation (a factor: about two
// thirds of the ratios lie within gmean / gsd .. gmean * gsd), p10, p90.
function ratioStats(ratios) {
  const n = ratios.length;
  if (!n) return null;
  const logs = ratios.map(Math.log);
  const mean = logs.reduce((a, b) => a + b, 0) / n;
  const sd = Math.sqrt(logs.reduce((a, b) => a + (b - mean) ** 2, 0) / Math.max(n - 1, 1));
  const s = [...ratios].sort((a, b) => a - b);
  return { n, gmean: Math.exp(mean), gsd: Math.exp(sd), p10: quantile(s, 0.1), median: quantile(s, 0.5), p90: quantile(s, 0.9), faster: ratios.filter((r) => r < 1).length };
}

function fmtStats(label, st) {
  if (!st) return `  ${label.padEnd(26)} (none)`;
  return `  ${label.padEnd(26)} n=${String(st.n).padEnd(4)} geomean ${st.gmean.toFixed(2)}x  geo-std ${st.gsd.toFixed(2)}x  ` +
    `p10 ${st.p10.toFixed(2)}x  median ${st.median.toFixed(2)}x  p90 ${st.p90.toFixed(2)}x  passnet faster on ${st.faster}`;
}

const us = (ms) => `${(ms * 1e3).toFixed(1)}us`;

function main() {
  const [subFile, pnFile, ortFile, nodeFile, failFile] = process.argv.slice(2);
  if (!nodeFile) {
    process.stderr.write('usage: node bench/ort/report.js SUBGRAPHS.jsonl PASSNET.jsonl ORT_C.jsonl ORT_NODE.jsonl [FAILURES.txt]\n');
    process.exit(2);
  }
  const subs = jsonl(subFile);
  const ops = new Map(subs.map((s) => [s.hash, s.ops]));
  // A subgraph without boundary inputs is all constants: ORT folds it into
  // an initializer when the session is made, so its "run" copies a result.
  const noInputs = new Set(subs.filter((s) => s.inputs === 0).map((s) => s.hash));
  const pn = new Map(jsonl(pnFile).map((r) => [path.basename(r.path), r]));
  const ort = new Map(jsonl(ortFile).map((r) => [path.basename(r.path), r]));
  const viaNode = new Map(jsonl(nodeFile).map((r) => [path.basename(r.path), r]));
  const failures = failFile && fs.existsSync(failFile)
    ? fs.readFileSync(failFile, 'utf8').split('\n').filter(Boolean).map((l) => l.split('\t')) : [];

  const cases = [];
  const ortFailed = [];
  const pnFailed = [];
  const hashes = [...new Set([...pn.keys(), ...ort.keys(), ...viaNode.keys()])].sort();
  for (const hash of hashes) {
    const o = ort.get(hash) || { error: 'no record (did ort_time stop early?)' };
    if (o.error) { ortFailed.push([hash, o.error]); continue; }
    const p = pn.get(hash);
    if (!p) { pnFailed.push(hash); continue; }
    const nd = viaNode.get(hash) || {};
    cases.push({ hash, pn: p.median_ms, ort: o.median_ms, ortProf: nd.median_ms, ortJs: nd.js_median_ms, ortProfJs: nd.prof_js_median_ms, nd, o, ops: ops.get(hash) || [] });
  }
  const sample = Number(process.env.PN_SAMPLE || 0);
  const popul = Number(process.env.PN_POPULATION || 0);
  console.log(`passnet executor vs ONNX Runtime ${process.env.PN_ORT_VERSION || '?'}, 1 thread each; ` +
    `median of ${process.env.PN_TRIALS || '?'} runs after ${process.env.PN_WARMUP || '?'} warm-up runs`);
  if (sample) console.log(`sample: ${sample} of ${popul} fusion subgraphs (every k-th in order of node count, then hash)`);
  const byStage = {};
  for (const [stage] of failures) byStage[stage] = (byStage[stage] || 0) + 1;
  const lost = Object.entries(byStage).map(([k, v]) => `${k} ${v}`);
  lost.push(`passnet time failed ${pnFailed.length}`, `ORT failed ${ortFailed.length}`);
  console.log(`compared: ${cases.length} subgraphs (not compared: ${lost.join(', ')})`);

  const ratio = (c) => c.pn / c.ort;
  const timed = cases.filter((c) => c.ort > 0 && c.pn > 0);
  const small = timed.filter((c) => c.ort < SMALL_MS);
  console.log('\npassnet/ORT time ratio, ORT timed around its C API Run call (as passnet around pn_session_run):');
  const all = ratioStats(timed.map(ratio));
  const sm = ratioStats(small.map(ratio));
  console.log(fmtStats('all', all));
  console.log(fmtStats('ORT under 10 us', sm));
  const live = timed.filter((c) => !noInputs.has(c.hash));
  if (live.length < timed.length) {
    console.log(fmtStats('with inputs', ratioStats(live.map(ratio))));
    console.log(fmtStats('with inputs, ORT < 10 us', ratioStats(live.filter((c) => c.ort < SMALL_MS).map(ratio))));
    console.log(`  (${timed.length - live.length} subgraphs have no inputs: all constants, which ORT folds at load)`);
  }
  // The two kinds of work behave differently (kernel speed against
  // per-run overhead), so the geometric mean of all hides as much as it shows.
  const dense = (c) => c.ops.some((op) => DENSE.has(op));
  console.log(fmtStats('with Conv/MatMul/Gemm', ratioStats(timed.filter(dense).map(ratio))));
  console.log(fmtStats('without them', ratioStats(timed.filter((c) => !dense(c)).map(ratio))));
  if (timed.length < cases.length) console.log(`  (${cases.length - timed.length} cases with an ORT time of 0 us left out)`);
  const sum = (xs) => xs.reduce((a, b) => a + b, 0);
  console.log(`  total time: passnet ${sum(timed.map((c) => c.pn)).toFixed(1)} ms, ORT ${sum(timed.map((c) => c.ort)).toFixed(1)} ms` +
    ` (ratio of sums ${(sum(timed.map((c) => c.pn)) / sum(timed.map((c) => c.ort))).toFixed(2)}x)`);

  // model_run is reported in whole microseconds; 0 would make the ratio
  // infinite, so such cases are left out.
  const profCases = cases.filter((c) => c.ortProf > 0);
  console.log('\nthe same with ORT timed through Node, for comparison: by its profiler (model_run events, whole us,');
  console.log('plus the profiler\'s own per-node cost):');
  console.log(fmtStats('all', ratioStats(profCases.map((c) => c.pn / c.ortProf))));
  console.log(fmtStats('ORT under 10 us', ratioStats(profCases.filter((c) => c.ortProf < SMALL_MS).map((c) => c.pn / c.ortProf))));
  const jsCases = cases.filter((c) => c.ortJs > 0);
  console.log('and around `await session.run()` (includes the Node binding):');
  console.log(fmtStats('all', ratioStats(jsCases.map((c) => c.pn / c.ortJs))));
  console.log(fmtStats('ORT under 10 us', ratioStats(jsCases.filter((c) => c.ortJs < SMALL_MS).map((c) => c.pn / c.ortJs))));
  const profOver = cases.filter((c) => c.ortProfJs > 0).map((c) => c.ortProfJs - c.ortJs).sort((a, b) => a - b);
  if (profOver.length) {
    console.log(`  profiler cost per run (Node wall time with profiling less without): median ${us(quantile(profOver, 0.5))}, ` +
      `p90 ${us(quantile(profOver, 0.9))}`);
  }

  if (all) {
    console.log(`\ntargets: within 1.5x of ORT overall: ${all.gmean <= 1.5 ? 'met' : 'not met'} (geomean ${all.gmean.toFixed(2)}x); ` +
      `faster on subgraphs under 10 us: ${sm ? (sm.gmean < 1 ? 'met' : 'not met') + ` (geomean ${sm.gmean.toFixed(2)}x over ${sm.n})` : 'no such subgraphs'}`);
  }

  console.log('\nworst 10 ratios:');
  console.log('  ratio      passnet        ORT  nodes  hash                              ops  (* no inputs: ORT folds it at load)');
  for (const c of [...timed].sort((a, b) => ratio(b) - ratio(a)).slice(0, 10)) {
    const o = c.ops.length > 8 ? [...c.ops.slice(0, 8), `... (${c.ops.length})`] : c.ops;
    console.log(`  ${ratio(c).toFixed(1).padStart(6)}x ${us(c.pn).padStart(10)} ${us(c.ort).padStart(10)}  ${String(c.ops.length).padStart(5)}  ${c.hash}  ${o.join(' ')}${noInputs.has(c.hash) ? '  *' : ''}`);
  }

  const nodeBad = cases.filter((c) => c.nd.agree === false).map((c) => c.hash);
  const checked = cases.filter((c) => c.o.agree !== undefined);
  const bad = checked.filter((c) => !c.o.agree);
  const worstAbs = Math.max(0, ...checked.map((c) => c.o.max_abs).filter(Number.isFinite));
  const relSorted = checked.map((c) => c.o.max_rel).filter(Number.isFinite).sort((a, b) => a - b);
  console.log(`\noutputs: ${checked.length} compared, ${checked.length - bad.length} agree, ${bad.length} disagree ` +
    `(|ort - passnet| <= ${process.env.PN_ATOL || '?'} + ${process.env.PN_RTOL || '?'} * |passnet|); ` +
    `largest max_abs ${worstAbs.toExponential(2)}, median max_rel ${quantile(relSorted, 0.5).toExponential(2)}`);
  for (const c of bad) {
    // null in the JSON stands for an infinite (or NaN) difference
    const e = (v) => (v === null ? 'inf' : v.toExponential(2));
    console.log(`  disagree  ${c.hash}  max_abs ${e(c.o.max_abs)}  max_rel ${e(c.o.max_rel)}  ${c.o.diff || ''}  [${c.ops.slice(0, 8).join(' ')}]`);
  }
  console.log(`  cross-check through Node: ${nodeBad.length} disagree` +
    (nodeBad.length ? ` (${nodeBad.map((h) => h.slice(0, 8)).join(' ')})` : ''));
  if (ortFailed.length || failures.length || pnFailed.length) console.log('\nnot compared:');
  for (const [stage, hash, why] of failures) console.log(`  ${stage}  ${hash}  ${why}  [${(ops.get(hash) || []).slice(0, 6).join(' ')}]`);
  for (const [h, r] of viaNode) if (r.error) console.log(`  ORT through Node failed (timed in C)  ${h}  ${r.error.slice(0, 200)}`);
  for (const h of pnFailed) console.log(`  passnet time failed  ${h}  [${(ops.get(h) || []).slice(0, 6).join(' ')}]`);
  for (const [h, why] of ortFailed) console.log(`  ORT failed  ${h}  ${why.slice(0, 200)}  [${(ops.get(h) || []).slice(0, 6).join(' ')}]`);
}

main();
