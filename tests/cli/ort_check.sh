# passnet check --backend ort: reference and candidate timed on ONNX Runtime
# at its default optimisation level, their outputs still judged on
# passnet's executor.  On a task set exported from a profiled store of
# tests/fixtures/ort_models.py:
#  - the reference as its own candidate passes on every variant, and each
#    line says ort (and the ORT version) timed it, a positive speedup (how
#    near 1 depends on the machine's load, which a test does not assert);
#    without --backend the line says passnet;
#  - a candidate with far more work than the reference added on top
#    (tests/fixtures/slower_candidate.py; exactly the same outputs) passes,
#    with a speedup below 0.5 under ORT;
#  - a candidate ORT refuses though passnet runs it fails as runtime with
#    ORT's message (so ORT, not passnet, timed it);
#  - a task whose reference ORT refuses (the Concat of an empty constant)
#    is not checked (exit 3, one line per variant saying why), though
#    passnet's own backend checks it;
#  - score names the backend, and marks a set that mixes two as MIXED;
#  - a missing library: one line, exit 1, no results; --backend and
#    --ort-lib misuse are refused.
. "$ROOT/tests/cli/lib.sh"
need_ort_lib
models="$TEST_TMP/models"
"$PY" "$ROOT/tests/fixtures/ort_models.py" "$models" || fail "ort_models.py failed"
db="$TEST_TMP/db"
pn --db "$db" build --variants 0 "$models"
[ "$status" -eq 0 ] || fail "build: $out"
pn --db "$db" exec --warmup 0 --trials 1
[ "$status" -eq 0 ] || fail "exec: $out"
set_dir="$TEST_TMP/set"
pn --db "$db" export --out "$set_dir" --tasks 20
[ "$status" -eq 0 ] || fail "export: $out"

# task_with OP: the first task (in name order) whose ops hold OP
task_with() {
	"$PY" - "$set_dir" "$1" <<'PYEOF'
import glob, json, os, sys
for f in sorted(glob.glob(sys.argv[1] + "/tasks/*/task.json")):
    if sys.argv[2] in json.load(open(f))["ops"]:
        print(os.path.dirname(f))
        break
PYEOF
}
conv=$(task_with Conv)
[ -n "$conv" ] || fail "no task with a Conv in $set_dir"
# export leaves out emptycat's subgraphs (their Concat joins ranks 1 and 3,
# which onnx's checker rejects)
[ -z "$(task_with Concat)" ] || fail "a task with emptycat's Concat was exported"
n_var=$(ls -d "$conv"/v* | wc -l | tr -d ' ')
[ "$n_var" -ge 2 ] || fail "$conv: $n_var variants"

# lines FILE: checks every results line's backend, prints "speedup" per line
lines() {
	"$PY" - "$@" <<'PYEOF'
import json, math, sys
path, backend = sys.argv[1], sys.argv[2]
for line in open(path):
    r = json.loads(line)
    assert r["backend"] == backend, r
    assert ("ort_version" in r) == (backend == "ort"), r
    if backend == "ort":
        assert r["ort_version"].startswith("1."), r
    assert r["error_class"] == "none" and r["pass_level"] == -10, r
    assert r["speedup"] > 0 and math.isfinite(r["speedup"]), r
    print(r["speedup"])
PYEOF
}

# 1. the reference as its own candidate (a task folder holds <variant>/model.onnx)
pn -j1 check --backend ort --ort-lib "$lib" "$conv" "$conv" --out "$TEST_TMP/self.jsonl"
[ "$status" -eq 0 ] || fail "check --backend ort of the reference: status $status: $out"
expect_eq "$(wc -l <"$TEST_TMP/self.jsonl" | tr -d ' ')" "$n_var" "one line per variant"
lines "$TEST_TMP/self.jsonl" ort >/dev/null || fail "the reference under ORT: $(cat "$TEST_TMP/self.jsonl")"
pn -j1 check "$conv" "$conv" --out "$TEST_TMP/self-passnet.jsonl"
[ "$status" -eq 0 ] || fail "check of the reference: status $status: $out"
lines "$TEST_TMP/self-passnet.jsonl" passnet >/dev/null ||
	fail "the reference on passnet: $(cat "$TEST_TMP/self-passnet.jsonl")"

# score: the backend of the samples, and a set mixing two backends is marked
pn score "$TEST_TMP/self.jsonl"
[ "$status" -eq 0 ] || fail "score of the ORT results: $out"
expect_contains "$out" "check backend ort 1." "score names the backend"
cat "$TEST_TMP/self.jsonl" "$TEST_TMP/self-passnet.jsonl" >"$TEST_TMP/both.jsonl"
pn score "$TEST_TMP/both.jsonl" --json
echo "$out" | grep '^{' | "$PY" -c 'import json, sys
j = json.loads(sys.stdin.read())
assert j["mixed"] is True and j["backends"][0].startswith("ort 1.") and j["backends"][1] == "passnet", j
assert len(j["backends"]) == 2, j' || fail "score --json of two backends: $out"
expect_contains "$out" "2 backends (mixed)" "a warning for two backends"

# 2. a far slower candidate with the same outputs, on the float32 variant
v32=$(ls -d "$conv"/v01-*)
"$PY" "$ROOT/tests/fixtures/slower_candidate.py" "$v32/model.onnx" "$TEST_TMP/slow.onnx" ||
	fail "slower_candidate.py failed"
pn -j1 check --backend ort --ort-lib "$lib" "$v32" "$TEST_TMP/slow.onnx" --out "$TEST_TMP/slow.jsonl"
[ "$status" -eq 0 ] || fail "check --backend ort of the slower candidate: status $status: $out"
s=$(lines "$TEST_TMP/slow.jsonl" ort) || fail "the slower candidate: $(cat "$TEST_TMP/slow.jsonl")"
"$PY" -c "import sys; sys.exit(not float(sys.argv[1]) < 0.5)" "$s" ||
	fail "the candidate with far more work: speedup $s under ORT"

# a candidate passnet runs and ORT refuses (its output concatenated with an
# empty rank-1 constant, as in ort_models.py): timed on ORT, so a runtime
# error with ORT's message; passnet's own backend passes it
"$PY" - "$v32/model.onnx" "$TEST_TMP/refused.onnx" <<'PYEOF' || fail "the candidate ORT refuses"
import sys
import numpy as np
import onnx
from onnx import helper as h, numpy_helper as nh
m = onnx.load(sys.argv[1])
g = m.graph
y = g.output[0].name
for n in g.node:
    n.output[:] = ["pre_y" if o == y else o for o in n.output]
g.initializer.append(nh.from_array(np.zeros(0, dtype=np.float32), "empty"))
g.node.append(h.make_node("Concat", ["empty", "pre_y"], [y], axis=0))
onnx.save(m, sys.argv[2])
PYEOF
pn -j1 check --backend ort --ort-lib "$lib" "$v32" "$TEST_TMP/refused.onnx" --out "$TEST_TMP/cand-refused.jsonl"
expect_eq "$status" 1 "a candidate ORT refuses (exit status): $out"
"$PY" - "$TEST_TMP/cand-refused.jsonl" <<'PYEOF' || fail "the candidate ORT refuses: $(cat "$TEST_TMP/cand-refused.jsonl")"
import json, sys
r = json.loads(open(sys.argv[1]).read())
assert r["error_class"] == "runtime" and r["backend"] == "ort" and r["speedup"] is None, r
assert r["reason"].startswith("while timing: ONNX Runtime does not load the model: "), r
assert "Concat" in r["reason"], r
PYEOF
pn -j1 check "$v32" "$TEST_TMP/refused.onnx" --out "$TEST_TMP/cand-refused-passnet.jsonl"
[ "$status" -eq 0 ] || fail "passnet's backend on the candidate ORT refuses: status $status: $out"

# 3. a reference ORT refuses: not checked, the candidate not blamed.  The
# task: the Conv task with every variant's reference concatenated with the
# empty constant as the candidate above (a task set from another exporter;
# passnet's own export leaves such graphs out), the same outputs.
concat="$TEST_TMP/refused-task"
cp -r "$conv" "$concat"
for v in "$concat"/v*/; do
	"$PY" - "$v/model.onnx" "$v/model.onnx" <<'PYEOF' || fail "the reference ORT refuses: $v"
import sys
import numpy as np
import onnx
from onnx import helper as h, numpy_helper as nh
m = onnx.load(sys.argv[1])
g = m.graph
y = g.output[0].name
dt = g.output[0].type.tensor_type.elem_type
for n in g.node:
    n.output[:] = ["pre_y" if o == y else o for o in n.output]
g.initializer.append(nh.from_array(np.zeros(0, dtype=onnx.mapping.TENSOR_TYPE_TO_NP_TYPE[dt]), "empty"))
g.node.append(h.make_node("Concat", ["empty", "pre_y"], [y], axis=0))
onnx.save(m, sys.argv[2])
PYEOF
done
pn -j1 check --backend ort --ort-lib "$lib" "$concat" "$concat" --out "$TEST_TMP/refused.jsonl"
expect_eq "$status" 3 "check --backend ort of a task ORT refuses (exit status)"
[ ! -s "$TEST_TMP/refused.jsonl" ] || fail "results for a reference ORT refuses: $(cat "$TEST_TMP/refused.jsonl")"
n_refused=$(ls -d "$concat"/v* | wc -l | tr -d ' ')
n_lines=$(printf '%s\n' "$out" | grep -c "not checked: the reference cannot be timed: ONNX Runtime does not load it: ONNX Runtime 1.*Concat" || true)
expect_eq "$n_lines" "$n_refused" "one line per variant ORT refuses: $out"
pn -j1 check "$concat" "$concat" --out "$TEST_TMP/concat-passnet.jsonl"
[ "$status" -eq 0 ] || fail "passnet's backend on the Concat task: status $status: $out"

# 4. a missing library: one line, exit 1, no results
pn -j1 check --backend ort --ort-lib /nonexistent/libonnxruntime.so.1 "$conv" "$conv" \
	--out "$TEST_TMP/missing.jsonl"
expect_eq "$status" 1 "check --backend ort without the library"
expect_contains "$out" "passnet: check: --backend ort: cannot open ONNX Runtime: /nonexistent/libonnxruntime.so.1" \
	"the missing library named"
expect_eq "$(printf '%s\n' "$out" | wc -l | tr -d ' ')" 1 "one line about the missing library"
[ ! -s "$TEST_TMP/missing.jsonl" ] || fail "results without the library"
pn check --backend tvm "$conv" "$conv"
expect_contains "$out" "--backend tvm: not a backend (passnet, ort)" "an unknown backend"
[ "$status" -ne 0 ] || fail "an unknown backend accepted"
pn check --ort-lib "$lib" "$conv" "$conv"
expect_contains "$out" "--ort-lib needs --backend ort" "--ort-lib alone"
[ "$status" -ne 0 ] || fail "--ort-lib without --backend ort accepted"
echo "ort_check: ok"
