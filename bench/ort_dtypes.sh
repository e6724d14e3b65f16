#!/bin/sh
# bench/ort_dtypes.sh [CORPUS] - `make bench-ort-dtypes`: passnet's executor
# against ONNX Runtime on exported task variants, one thread each, each
# dtype apart (float32, float16, bfloat16): what `passnet check` times a
# candidate on, and where a dtype the executor stages through float32 would
# show.
#
#   TASKS=40 BUDGET=120 TRIALS=5 WARMUP=2 KEEP=DIR PASSNET=BIN bench/ort_dtypes.sh [CORPUS]
#
# 1. builds a store from CORPUS/models (shape variants on; the fixture
#    corpus without CORPUS), profiles its fusion subgraphs of 2+ ops for
#    BUDGET seconds and exports TASKS tasks (export adds float16 and
#    bfloat16 versions of float32 variants: docs/tasks.md);
# 2. every variant folder (model.onnx, test_data_set_0 with the exported
#    inputs and reference outputs) is timed by `passnet -j1 time` and by
#    build/bench/ort_time (ORT's C API, optimisations ALL, 1 thread; the
#    same timed region and clock), which also compares ORT's outputs with
#    the references;
# 3. prints per dtype the variants timed, the geometric mean of passnet /
#    ORT (below 1: passnet faster), its spread and the slowest variants.
# Variants one side cannot run are counted with the reason.  KEEP=DIR keeps
# the store and the task set, and a later run with the same KEEP times the
# same variants again: PASSNET=BIN times them with another build.
set -eu
cd "$(dirname "$0")/.."
corpus=${1:-}
TASKS=${TASKS:-40}
BUDGET=${BUDGET:-120}
TRIALS=${TRIALS:-5}
WARMUP=${WARMUP:-2}
PY=${PYTHON:-/usr/bin/python3}
if [ -n "${KEEP:-}" ]; then
	work=$KEEP
	mkdir -p "$work"
else
	work=$(mktemp -d)
	trap 'rm -rf "$work"' EXIT
fi
[ -n "$corpus" ] || corpus=$(tests/fixtures/corpus.sh)

. bench/ort/cases.sh
ort_setup

if [ ! -f "$work/tasks/MANIFEST.tsv" ]; then
	rm -rf "$work/db" "$work/tasks"
	bin/passnet --db "$work/db" -q build "$corpus/models"
	bin/passnet --db "$work/db" -q exec --strategy fusion --min-nodes 2 --warmup 1 --trials 3 \
		--budget "$BUDGET"
	bin/passnet --db "$work/db" -q export --out "$work/tasks" --tasks "$TASKS"
fi
ls -d "$work"/tasks/tasks/*/v*/ | sed 's:/$::' > "$work/case_list"
echo "timing $(wc -l < "$work/case_list") variants of $(ls "$work/tasks/tasks" | wc -l) tasks" \
	"with passnet -j1, then ONNX Runtime" >&2
time_cases 1e-2 1e-3 ort.jsonl

"$PY" - "$work" "$TRIALS" "$WARMUP" <<'PYEOF'
import json, math, os, sys
work = sys.argv[1]
def rows(name):
    out = {}
    for line in open(os.path.join(work, name)):
        line = line.strip()
        if line:
            r = json.loads(line)
            out[os.path.relpath(r["path"].rstrip("/"), work)] = r
    return out
pn, ort = rows("passnet.jsonl"), rows("ort.jsonl")
dtype_of = {}
for task in os.listdir(os.path.join(work, "tasks", "tasks")):
    tj = json.load(open(os.path.join(work, "tasks", "tasks", task, "task.json")))
    for v in tj["variants"]:
        dtype_of[os.path.join("tasks", "tasks", task, v["name"])] = v["dtype"]
by, missing = {}, {}
for case in sorted(set(pn) | set(ort)):
    p, o = pn.get(case, {}), ort.get(case, {})
    d = dtype_of.get(case, "?")
    if "median_ms" not in p or "median_ms" not in o:
        why = (p.get("error") or o.get("error") or "no time")[:120]
        missing.setdefault(d, []).append((case, why))
        continue
    by.setdefault(d, []).append((p["median_ms"] / o["median_ms"], case, o.get("agree")))
print("exported variants, 1 thread, %s warm-up + %s timed runs; passnet / ORT (below 1: passnet faster)"
      % (sys.argv[3], sys.argv[2]))
print("%-10s %8s %10s %8s %8s %8s %8s" % ("dtype", "variants", "geomean", "p10", "median", "p90", "differ"))
for d in sorted(by):
    r = sorted(x[0] for x in by[d])
    q = lambda f: r[min(len(r) - 1, int(f * len(r)))]
    g = math.exp(sum(math.log(x) for x in r) / len(r))
    differ = sum(1 for x in by[d] if x[2] is False)
    print("%-10s %8d %10.2f %8.2f %8.2f %8.2f %8d" % (d, len(r), g, q(0.1), q(0.5), q(0.9), differ))
for d in sorted(by):
    worst = sorted(by[d], reverse=True)[:3]
    print("slowest %s: %s" % (d, "; ".join("%s %.2f" % (c.split("/")[-2] + "/" + c.split("/")[-1], x)
                                         for x, c, _ in worst)))
for d, cases in sorted(missing.items()):
    print("not timed (%s): %d, e.g. %s: %s" % (d, len(cases), cases[0][0], cases[0][1]))
PYEOF
