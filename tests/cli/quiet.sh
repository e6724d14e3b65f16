# Quiet runs: build, exec and export over 16 small models with dynamic
# axes print one summary line a stage, each counting its warnings by kind
# and naming the command that lists them; the warnings are kept (the store
# for extract and exec, the export's left_out.tsv for export) and listed by
# `passnet ls --warnings` (text and --json), a rerun neither repeats nor
# loses them, and -v prints each one as it happens.  The models, made here:
# chains whose float16 variants overflow, chains fed by an index computed
# upstream (every input of their cuts pinned), chains whose outputs do not
# follow their inputs (Sign of Abs) or follow them on some draws only (a
# bool a row: export wants them to change on every draw), and models that
# run at no binding (a Gather index out of range that inference accepts),
# which extract stores with a warning and exec's ranges phase cannot run.
. "$ROOT/tests/cli/lib.sh"
m="$TEST_TMP/models"
"$PY" - "$m" <<'PYEOF' || fail "making the models"
import sys, os
import numpy as np
import onnx
from onnx import helper as h, TensorProto as T, numpy_helper as nh
out = sys.argv[1]
os.makedirs(out, exist_ok=True)
def save(name, nodes, inputs, outputs, inits):
    g = h.make_graph(nodes, name, inputs, outputs, inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)], producer_name="quiet.sh")
    m.ir_version = 8
    onnx.checker.check_model(m)
    onnx.save(m, os.path.join(out, name + ".onnx"))
for i in range(4):
    w = 4 + 2 * i
    # overflow float16: x * 1e4 * 1e4 (+ a bias), a chain export makes f16 variants of
    save(f"overflow{i}", [
        h.make_node("Mul", ["x", "a"], ["t0"]),
        h.make_node("Mul", ["t0", "b"], ["t1"]),
        h.make_node("Add", ["t1", "c"], ["t2"]),
        h.make_node("Relu", ["t2"], ["y"])],
        [h.make_tensor_value_info("x", T.FLOAT, ["N", w])],
        [h.make_tensor_value_info("y", T.FLOAT, ["N", w])],
        [nh.from_array(np.full([w], 3e4 + i, np.float32), "a"),
         nh.from_array(np.full([w], 3e4, np.float32), "b"),
         nh.from_array(np.full([w], 7e8, np.float32), "c")])
    # every input pinned: cuts fed only by the index ArgMax computes, which
    # a subgraph is fed as the model's run had it (a Shape-fed chain is
    # folded once the shapes are bound, so it is no such case)
    save(f"pinned{i}", [
        h.make_node("ArgMax", ["x"], ["a"], axis=1, keepdims=0),
        h.make_node("Gather", ["emb", "a"], ["e"], axis=0),
        h.make_node("Mul", ["e", "k"], ["em"]),
        h.make_node("Tanh", ["em"], ["z"])],
        [h.make_tensor_value_info("x", T.FLOAT, ["N", w])],
        [h.make_tensor_value_info("z", T.FLOAT, ["N", 3])],
        [nh.from_array(np.arange(3 * w, dtype=np.float32).reshape(w, 3) / 10, "emb"),
         nh.from_array(np.full([3], 2.0 + i, np.float32), "k")])
    # outputs that keep their bits on other draws: Sign of Abs is 1 on
    # every input drawn away from 0 (models 0, 1); outputs that keep them on
    # some draws only: whether the mean is above 0, one bool a row (2, 3)
    if i < 2:
        save(f"constant{i}", [
            h.make_node("Abs", ["x"], ["a"]),
            h.make_node("Sign", ["a"], ["s"]),
            h.make_node("Mul", ["s", "k"], ["sm"]),
            h.make_node("Tanh", ["sm"], ["z"])],
            [h.make_tensor_value_info("x", T.FLOAT, ["N", w])],
            [h.make_tensor_value_info("z", T.FLOAT, ["N", w])],
            [nh.from_array(np.full([w], 0.5 + i, np.float32), "k")])
    else:
        save(f"flip{i}", [
            h.make_node("ReduceMean", ["x"], ["r"], axes=[1], keepdims=0),
            h.make_node("Greater", ["r", "zero"], ["b"]),
            h.make_node("Cast", ["b"], ["f"], to=T.FLOAT),
            h.make_node("Mul", ["f", "k"], ["fm"]),
            h.make_node("Tanh", ["fm"], ["z"])],
            [h.make_tensor_value_info("x", T.FLOAT, ["N", w])],
            [h.make_tensor_value_info("z", T.FLOAT, ["N"])],
            [nh.from_array(np.zeros([], np.float32), "zero"),
             nh.from_array(np.full([], 0.5 + i, np.float32), "k")])
    # runs at no binding: a Gather index out of range (inference accepts it)
    save(f"norun{i}", [
        h.make_node("Gather", ["x", "idx"], ["g"], axis=1),
        h.make_node("Mul", ["g", "m"], ["gm"]),
        h.make_node("Tanh", ["gm"], ["y"])],
        [h.make_tensor_value_info("x", T.FLOAT, ["N", w])],
        [h.make_tensor_value_info("y", T.FLOAT, ["N", 2])],
        [nh.from_array(np.array([0, 50 + i], np.int64), "idx"),
         nh.from_array(np.full([2], 0.5, np.float32), "m")])
PYEOF
[ "$(ls "$m" | wc -l)" -eq 16 ] || fail "16 models wanted in $m"

db="$TEST_TMP/db" set="$TEST_TMP/set"
: > "$TEST_TMP/all.out"
for step in "build $m" "exec --budget 30" "export --out $set --tasks 30 --strategy all"; do
	pn --db "$db" $step
	[ "$status" -eq 0 ] || fail "$step: $out"
	printf '%s\n' "$out" >> "$TEST_TMP/all.out"
done
cat "$TEST_TMP/all.out"
lines=$(wc -l < "$TEST_TMP/all.out")
[ "$lines" -le 30 ] || fail "build, exec and export printed $lines lines, not at most 30"
grep -q '^passnet: warning:' "$TEST_TMP/all.out" && fail "warning lines printed without -v"
all=$(cat "$TEST_TMP/all.out")

# count N of the clause "; N WHAT: passnet ls --warnings --kind KIND..." (0 when absent)
count() { printf '%s\n' "$all" | sed -n "s/.*; \([0-9]*\) [^;]*: passnet ls --warnings --kind $1\\b.*/\\1/p" | head -n 1; }
# the listed warnings of a kind: ls --warnings --kind KIND [ARGS]
listed() { k=$1; shift; pn --db "$db" ls --warnings --kind "$k" "$@"; [ "$status" -eq 0 ] || fail "ls --warnings --kind $k: $out"; }

norun=$(count ranges-not-run) warned=$(count model) f16=$(count float16-overflow) pinned=$(count pinned-inputs) constant=$(count constant-outputs)
expect_eq "${norun:-0}" 4 "exec's summary: the 4 models that did not run for their ranges"
expect_eq "${warned:-0}" 4 "extract's summary: the 4 models stored with warnings"
[ "${f16:-0}" -ge 1 ] || fail "export's summary counts no float16 variant left out: $all"
[ "${pinned:-0}" -ge 1 ] || fail "export's summary counts no variant with every input pinned: $all"
[ "${constant:-0}" -ge 1 ] || fail "export's summary counts no variant whose outputs keep their bits: $all"
expect_contains "$all" "variants left out (outputs do not follow the inputs drawn, so constants could pass them): passnet ls --warnings --kind constant-outputs --export $set" "export's constant-outputs reason and command"
expect_contains "$all" "variants left out (every input is pinned, so constants could pass them): passnet ls --warnings --kind pinned-inputs --export $set" "export's pinned reason and command"
expect_contains "$all" "models did not run for their value ranges (their subgraphs get generic inputs): passnet ls --warnings --kind ranges-not-run" "the reason and the command"
expect_contains "$all" "float16 variants left out (outputs overflow float16): passnet ls --warnings --kind float16-overflow --export $set" "export's reason and command"

# the store keeps them; the listing names each model (text and --json)
listed ranges-not-run
expect_eq "$(printf '%s\n' "$out" | grep -c '^exec  *ranges-not-run  *[0-9a-f]\{32\}  .*: norun[0-3]\.onnx: .*out of range')" 4 "4 ranges-not-run listed"
listed model
expect_eq "$(printf '%s\n' "$out" | grep -c '^extract  *model  *[0-9a-f]\{32\}  .*norun[0-3]\.onnx: binding: ')" 4 "4 model warnings listed"
pn --db "$db" --json ls --warnings
[ "$status" -eq 0 ] || fail "ls --json --warnings: $out"
printf '%s\n' "$out" > "$TEST_TMP/store.jsonl"
"$PY" - "$TEST_TMP/store.jsonl" <<'PYEOF' || fail "ls --json --warnings"
import collections, json, sys
kinds = collections.Counter()
for line in open(sys.argv[1]):
    w = json.loads(line)
    assert set(w) == {"stage", "kind", "subject", "place", "message"}, w
    assert len(w["subject"]) == 32 and w["message"], w
    kinds[(w["stage"], w["kind"])] += 1
assert kinds[("exec", "ranges-not-run")] == 4, kinds
assert kinds[("extract", "model")] == 4, kinds
PYEOF
listed float16-overflow --export "$set"
expect_eq "$(printf '%s\n' "$out" | grep -c '^export  *float16-overflow  *t[0-9]*-[0-9a-f]*/v[0-9]*-[0-9a-f]*-f16  output 0 overflows float16')" "$f16" "the float16 variants listed"
listed pinned-inputs --export "$set"
expect_eq "$(printf '%s\n' "$out" | grep -c '^export  *pinned-inputs  *t[0-9]*-[0-9a-f]*/v[0-9]*-.*every input is pinned')" "$pinned" "the pinned variants listed"
listed constant-outputs --export "$set"
expect_eq "$(printf '%s\n' "$out" | grep -c '^export  *constant-outputs  *t[0-9]*-[0-9a-f]*/v[0-9]*-.*keep the same bits')" "$constant" "the constant-outputs variants listed"
# a variant whose outputs differ from the exported draw's but keep their
# bits on two later draws is left out too (a check whose draws all gave
# that one value would take it as constant)
printf '%s\n' "$out" | grep -q 'keep the same bits on draws [1-6] and [2-7] of 8 draws' ||
	fail "no variant left out for outputs that follow only some draws: $out"
pn --db "$db" --json ls --warnings --export "$set"
printf '%s\n' "$out" | "$PY" -c '
import json, sys
ws = [json.loads(l) for l in sys.stdin]
assert ws and all(w["stage"] == "export" and "/" in w["subject"] for w in ws), ws' || fail "ls --json --warnings --export: $out"
# the task set says the same: left_out.tsv is in its MANIFEST.tsv
grep -q '^left_out\.tsv	' "$set/MANIFEST.tsv" || fail "left_out.tsv is not in MANIFEST.tsv"

# a rerun neither repeats nor loses them
pn --db "$db" ls --warnings
before=$out
pn --db "$db" build "$m"
[ "$status" -eq 0 ] || fail "build again: $out"
pn --db "$db" exec --budget 30
[ "$status" -eq 0 ] || fail "exec again: $out"
pn --db "$db" ls --warnings
expect_eq "$out" "$before" "the warnings after a rerun"

# -v prints each as it happens (today's lines), and keeps the same ones
pn --db "$TEST_TMP/v" -v build "$m"
[ "$status" -eq 0 ] || fail "build -v: $out"
pn --db "$TEST_TMP/v" -v exec --budget 30
[ "$status" -eq 0 ] || fail "exec -v: $out"
expect_eq "$(printf '%s\n' "$out" | grep -c '^passnet: warning: ranges: model [0-9a-f]* (norun[0-3]\.onnx) did not run')" 4 "-v: a line per model that did not run"
pn --db "$TEST_TMP/v" -v export --out "$TEST_TMP/vset" --tasks 30
[ "$status" -eq 0 ] || fail "export -v: $out"
expect_eq "$(printf '%s\n' "$out" | grep -c '^passnet: warning: export: task .* left out: ')" \
	"$(($(wc -l < "$TEST_TMP/vset/left_out.tsv") - 1))" "-v: a line per variant left out"
pn --db "$TEST_TMP/v" ls --warnings
vlisted=$out
pn --db "$db" ls --warnings
expect_eq "$vlisted" "$out" "-v keeps the same warnings in the store"
passnet_help=$("$PASSNET" --help)
expect_contains "$passnet_help" "-v, --verbose" "passnet --help names -v"
echo "quiet: $lines lines for build, exec and export; $norun ranges-not-run, $warned model warnings, $f16 float16 variants left out, each listed"
