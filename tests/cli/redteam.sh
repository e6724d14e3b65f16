# Red team for `passnet check`: over a task set `passnet export` wrote,
# the candidates tests/cli/redteam_candidates.py builds the way a candidate
# author would.  Each cheat gets its error class and never a pass level:
# constants equal to the exported outputs, lookups of predictable or
# exported inputs (the lookup of the inputs the old published rule gave does
# pass when checked on exactly those: the test would catch the hole), the
# candidate echoing an input, other signatures, dtypes and shapes, NaN and
# Inf, an endless Loop, a memory bomb, external data outside the
# candidate's folder.  The reference, a rewrite with other ops in another
# order, and a correct but slower candidate pass; the slower one scores
# below 1 and is not flagged.
. "$ROOT/tests/cli/lib.sh"
need_corpus
PY=${PYTHON:-/usr/bin/python3}
db="$TEST_TMP/db"
set_dir="$TEST_TMP/set"

pn --db "$db" build "$CORPUS/models/resnet18"
[ "$status" -eq 0 ] || fail "build: $out"
pn --db "$db" exec --strategy fusion --min-nodes 2 --limit 20 --warmup 1 --trials 3
[ "$status" -eq 0 ] || fail "exec: $out"
pn --db "$db" export --out "$set_dir" --tasks 5 --seed 7
[ "$status" -eq 0 ] || fail "export: $out"

# a variant whose first input is like its output (the echo candidate) and
# that has a Relu (the rewrite), one output
picked=$("$PY" - "$set_dir" <<'PYEOF'
import glob, json, os, sys
for f in sorted(glob.glob(sys.argv[1] + "/tasks/*/task.json")):
    j = json.load(open(f))
    for v in j["variants"]:
        i, o = v["inputs"][0], v["outputs"]
        if ("Relu" in j["ops"] and len(o) == 1 and v["dtype"] == "float32" and
                (i["dtype"], i["shape"]) == (o[0]["dtype"], o[0]["shape"])):
            print(os.path.dirname(f), v["name"], j["seed"])
            sys.exit(0)
sys.exit(1)
PYEOF
) || fail "no variant with an input like its output and a Relu in $set_dir"
set -- $picked
task=$1
var=$2
export_seed=$3
vdir="$task/$var"

# The rule checks used to publish drew from the task's seed: what check
# draws with --check-seed <task seed>.  A candidate author could compute
# those inputs; here they are written, and the reference's outputs on them.
predict="$TEST_TMP/predict"
pn -j1 check "$vdir" "$vdir/model.onnx" --check-seed "$export_seed" --write-inputs "$predict" \
	--runs 1 --out "$TEST_TMP/predict.jsonl"
[ "$status" -eq 0 ] || fail "check writing its inputs: $out"
[ -f "$predict/$var/input_0.pb" ] || fail "--write-inputs wrote no $predict/$var/input_0.pb"
pn run "$vdir" --inputs "$predict/$var" --outputs "$predict/$var"
[ "$status" -eq 0 ] || fail "run on the predicted inputs: $out"

cand="$TEST_TMP/cand"
"$PY" "$ROOT/tests/cli/redteam_candidates.py" "$vdir" "$predict/$var" "$cand" ||
	fail "building the candidates"

field() {
	"$PY" -c 'import json, sys
print(json.loads(open(sys.argv[1]).readlines()[int(sys.argv[2])])[sys.argv[3]])' "$@"
}
# verdict NAME CLASS REASON [ARGS...]: checks candidate NAME, expects error
# class CLASS (and no pass level unless CLASS is none) with REASON in its reason
verdict() {
	name=$1 want=$2 why=$3
	shift 3
	res="$TEST_TMP/$name.jsonl"
	rm -f "$res"
	pn -j1 check "$vdir" "$cand/$name/model.onnx" --runs 3 --out "$res" "$@"
	[ -s "$res" ] || fail "$name: no result line: $out"
	got=$(field "$res" 0 error_class)
	[ "$got" = "$want" ] || fail "$name: error_class $got, expected $want: $(cat "$res")"
	lvl=$(field "$res" 0 pass_level)
	if [ "$want" = none ]; then
		[ "$status" -eq 0 ] || fail "$name: status $status for a correct candidate: $out"
	else
		[ "$lvl" = None ] || fail "$name: a $want with pass_level $lvl"
		[ "$status" -eq 1 ] || fail "$name: status $status, expected 1: $out"
	fi
	expect_contains "$(field "$res" 0 reason)" "$why" "$name: reason"
}

verdict constant cheat "holds the exported $var/test_data_set_0/output_0.pb"
verdict lookup_exported cheat "holds the exported"
# the lookup of the predictable inputs: correct when checked on exactly those
# inputs (the old rule), a cheat on inputs no one knew
verdict lookup none "" --check-seed "$export_seed"
expect_eq "$(field "$TEST_TMP/lookup.jsonl" 0 pass_level)" -10 "lookup on the inputs it knows"
mv "$TEST_TMP/lookup.jsonl" "$TEST_TMP/lookup_known.jsonl"
verdict lookup cheat "stay the same bits"
verdict echo cheat "is its input"
verdict extra_input shape "inputs and"
verdict double_output dtype "is float64, the reference's float32"
verdict flat_output shape "output 0"
verdict nan nan_inf "nan"
verdict inf nan_inf "inf"
verdict endless_loop runtime "time limit of 3 s" --time-limit 3
verdict memory_bomb runtime "refused before allocating" --memory-limit 4096
verdict outside_data runtime "outside the model's folder"
verdict absolute_data runtime "outside the model's folder"

verdict reference none ""
expect_eq "$(field "$TEST_TMP/reference.jsonl" 0 pass_level)" -10 "the reference"
verdict rewrite none ""
lvl=$(field "$TEST_TMP/rewrite.jsonl" 0 pass_level)
[ "$lvl" -le -5 ] || fail "the rewrite passes only at level $lvl"
verdict slow none ""
expect_eq "$(field "$TEST_TMP/slow.jsonl" 0 pass_level)" -10 "the slower candidate"
# two 768^3 MatMuls more than the reference: far slower on any machine
"$PY" -c 'import sys; s = float(sys.argv[1]); sys.exit(not 0 < s < 1)' \
	"$(field "$TEST_TMP/slow.jsonl" 0 speedup)" ||
	fail "the slower candidate has speedup $(field "$TEST_TMP/slow.jsonl" 0 speedup)"
pn score "$TEST_TMP/slow.jsonl" --json
echo "$out" | "$PY" -c 'import json, sys
es = json.loads(sys.stdin.read())["es_t"]
assert 0 < es["1"] < 1 and 0 < es["-10"] < 1, es' || fail "the slower candidate does not score below 1: $out"

# no cheat scores above the failure score at any level
cat "$TEST_TMP"/constant.jsonl "$TEST_TMP"/lookup_exported.jsonl > "$TEST_TMP/cheats.jsonl"
cat "$TEST_TMP/lookup.jsonl" >> "$TEST_TMP/cheats.jsonl"
pn score "$TEST_TMP/cheats.jsonl" --json
echo "$out" | grep '^{' | "$PY" -c 'import json, sys
es = json.loads(sys.stdin.read())["es_t"]
assert all(abs(v - 0.1) < 1e-9 for v in es.values()), es' || fail "a cheat scored: $out"
echo "redteam: 14 cheats rejected with their error class, reference, rewrite and slower candidate pass"
