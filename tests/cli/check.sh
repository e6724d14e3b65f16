# `passnet check` and `passnet score` on a task folder built here the way
# export/export.h lays one out (two variants of the smallest pattern with
# two fusion subgraphs in resnet18): the reference itself is correct and
# timed (a speedup that is a positive number: how near 1 it is depends on
# the machine's load, which a test does not assert); a candidate holding the exported outputs as constants, or
# one whose outputs ignore its inputs, is a cheat; a wrong output shape is a
# shape error; an op the executor rejects and an endless Loop are runtime
# errors; candidate outputs are compared on the exported test set; and the
# scorer's ES_t on these results matches the formula.
. "$ROOT/tests/cli/lib.sh"
need_corpus
PY=${PYTHON:-/usr/bin/python3}
db="$TEST_TMP/db"

pn --db "$db" build "$CORPUS/models/resnet18"
[ "$status" -eq 0 ] || fail "build: $out"
pn --db "$db" ls --subgraphs --strategy fusion --json
[ "$status" -eq 0 ] || fail "ls: $out"
picked=$(echo "$out" | "$PY" -c '
import collections, json, sys
by = collections.defaultdict(list)
for line in sys.stdin:
    r = json.loads(line)
    by[r["pattern"]].append(r)
ok = [(rs[0]["nodes"], p, sorted(r["hash"] for r in rs)) for p, rs in by.items() if len(rs) > 1]
nodes, p, hs = min(ok)
print(p, hs[0], hs[1])')
set -- $picked
pattern=$1
task_id="t0001-$(echo "$pattern" | cut -c1-12)"
task="$TEST_TMP/tasks/$task_id"
v1="v01-$(echo "$2" | cut -c1-12)"
v2="v02-$(echo "$3" | cut -c1-12)"

# --- the task fixture: model.onnx, test_data_set_0, task.json ---
i=0
for h in "$2" "$3"; do
	i=$((i + 1))
	v=$([ "$i" = 1 ] && echo "$v1" || echo "$v2")
	mkdir -p "$task/$v"
	pn --db "$db" export-onnx "$h" "$task/$v/model.onnx"
	[ "$status" -eq 0 ] || fail "export-onnx $h: $out"
	pn run "$task/$v" --seed 7 --outputs "$task/$v/test_data_set_0" \
		--write-inputs "$task/$v/test_data_set_0"
	[ "$status" -eq 0 ] || fail "run $v: $out"
	[ -f "$task/$v/test_data_set_0/input_0.pb" ] || fail "--write-inputs wrote no input_0.pb"
done
cat > "$task/task.json" <<EOF
{"task":"$task_id","pattern":"$pattern","split":"test","ops":[],"flags":[],"seed":7,
 "check_seed_rule":"see export/export.h","tolerance":{},
 "variants":[{"name":"$v1","hash":"$2"},{"name":"$v2","hash":"$3"}]}
EOF

# field FILE LINE KEY: one field of one results line (None for null)
field() {
	"$PY" -c 'import json, sys
print(json.loads(open(sys.argv[1]).readlines()[int(sys.argv[2])])[sys.argv[3]])' "$@"
}
# check_one NAME EXPECTED_STATUS ARGS...: runs check into $TEST_TMP/NAME.jsonl
check_one() {
	name=$1
	want=$2
	shift 2
	pn -j1 check "$@" --out "$TEST_TMP/$name.jsonl"
	[ "$status" -eq "$want" ] || fail "check $name: status $status, expected $want: $out"
	[ -s "$TEST_TMP/$name.jsonl" ] || fail "check $name wrote no result"
}

# --- candidates derived from variant 1 ---
"$PY" "$ROOT/tests/cli/check_candidates.py" "$task/$v1" "$TEST_TMP/cand" ||
	fail "building the candidates"

# --- the reference as candidate, one model per variant ---
mkdir -p "$TEST_TMP/same/$v1" "$TEST_TMP/same/$v2"
cp "$task/$v1/model.onnx" "$TEST_TMP/same/$v1/"
cp "$task/$v2/model.onnx" "$TEST_TMP/same/$v2/"
check_one same 0 "$task" "$TEST_TMP/same" --runs 7
expect_eq "$(wc -l < "$TEST_TMP/same.jsonl" | tr -d ' ')" 2 "lines for two variants"
for n in 0 1; do
	expect_eq "$(field "$TEST_TMP/same.jsonl" $n error_class)" none "reference vs itself"
	expect_eq "$(field "$TEST_TMP/same.jsonl" $n pass_level)" -10 "reference vs itself"
	expect_eq "$(field "$TEST_TMP/same.jsonl" $n task)" "$task_id" "task id"
	s=$(field "$TEST_TMP/same.jsonl" $n speedup)
	"$PY" -c "import math, sys; s = float(sys.argv[1]); sys.exit(not (s > 0 and math.isfinite(s)))" "$s" ||
		fail "reference vs itself: speedup '$s' is not a positive number"
done
expect_eq "$(field "$TEST_TMP/same.jsonl" 1 variant)" "$v2" "second variant"

# every line names the check seed its fresh inputs came from (drawn at
# random: two checks draw two seeds) and the build that judged
"$PY" - "$TEST_TMP/same.jsonl" <<'PYEOF' || fail "check_seed / check_build missing or malformed"
import json, re, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
assert len({l["check_seed"] for l in lines}) == 1, lines
for l in lines:
    assert isinstance(l["check_seed"], int) and 0 <= l["check_seed"] < 2 ** 53, l
    assert re.fullmatch("[0-9a-f]{16}", l["check_build"]), l
PYEOF
check_one same2 0 "$task/$v1" "$TEST_TMP/same/$v1/model.onnx" --runs 1
[ "$(field "$TEST_TMP/same.jsonl" 0 check_seed)" != "$(field "$TEST_TMP/same2.jsonl" 0 check_seed)" ] ||
	fail "two checks drew the same check seed"
# --check-seed repeats a check: the same seed, the same verdict and errors
for n in 1 2; do
	check_one seeded$n 0 "$task/$v1" "$TEST_TMP/cand/perturb.onnx" --check-seed 123456789 --runs 1
	expect_eq "$(field "$TEST_TMP/seeded$n.jsonl" 0 check_seed)" 123456789 "--check-seed"
done
for k in error_class pass_level max_abs max_rel check_build; do
	expect_eq "$(field "$TEST_TMP/seeded1.jsonl" 0 $k)" "$(field "$TEST_TMP/seeded2.jsonl" 0 $k)" \
		"$k with the same --check-seed"
done
pn check "$task/$v1" "$TEST_TMP/same" --check-seed 9007199254740992
[ "$status" -ne 0 ] || fail "a check seed of 2^53 was taken"
expect_contains "$out" "below 2^53" "a check seed of 2^53"

# one variant folder as TASKDIR: only that variant
check_one single 0 "$task/$v2/" "$task/$v2/model.onnx"
expect_eq "$(wc -l < "$TEST_TMP/single.jsonl" | tr -d ' ')" 1 "lines for one variant"
expect_eq "$(field "$TEST_TMP/single.jsonl" 0 variant)" "$v2" "the variant checked"
expect_eq "$(field "$TEST_TMP/single.jsonl" 0 error_class)" none "variant folder"


check_one cheat 1 "$task/$v1" "$TEST_TMP/cand/cheat.onnx"
expect_eq "$(field "$TEST_TMP/cheat.jsonl" 0 error_class)" cheat "exported outputs as constants"
expect_contains "$(field "$TEST_TMP/cheat.jsonl" 0 reason)" "holds the exported $v1/" "cheat reason"

check_one frozen 1 "$task/$v1" "$TEST_TMP/cand/frozen.onnx"
expect_eq "$(field "$TEST_TMP/frozen.jsonl" 0 error_class)" cheat "outputs blind to inputs"
expect_contains "$(field "$TEST_TMP/frozen.jsonl" 0 reason)" "stay the same bits" "frozen reason"

check_one shape 1 "$task/$v1" "$TEST_TMP/cand/shape.onnx"
expect_eq "$(field "$TEST_TMP/shape.jsonl" 0 error_class)" shape "flattened output"
expect_eq "$(field "$TEST_TMP/shape.jsonl" 0 pass_level)" None "no level for a shape error"

check_one runtime 1 "$task/$v1" "$TEST_TMP/cand/runtime.onnx"
expect_eq "$(field "$TEST_TMP/runtime.jsonl" 0 error_class)" runtime "unknown op"
expect_contains "$(field "$TEST_TMP/runtime.jsonl" 0 reason)" "Mystery" "runtime reason"

check_one loop 1 "$task/$v1" "$TEST_TMP/cand/loop.onnx" --time-limit 2
expect_eq "$(field "$TEST_TMP/loop.jsonl" 0 error_class)" runtime "endless Loop"
expect_contains "$(field "$TEST_TMP/loop.jsonl" 0 reason)" "time limit of 2 s" "loop reason"

# 1e-3 added to the output: correct at t = 1, not at the strictest levels
check_one perturb 0 "$task/$v1" "$TEST_TMP/cand/perturb.onnx"
expect_eq "$(field "$TEST_TMP/perturb.jsonl" 0 error_class)" none "perturbed output"
lvl=$(field "$TEST_TMP/perturb.jsonl" 0 pass_level)
[ "$lvl" = -3 ] || [ "$lvl" = -2 ] || fail "output + 1e-3 passes at level $lvl, expected -3 or -2"

# --- candidate outputs instead of a model: the exported test set ---
mkdir -p "$TEST_TMP/outs/$v1"
cp "$task/$v1/test_data_set_0/output_0.pb" "$TEST_TMP/outs/$v1/"
check_one outs 0 "$task/$v1" "$TEST_TMP/outs"
expect_eq "$(field "$TEST_TMP/outs.jsonl" 0 error_class)" none "exported outputs"
expect_eq "$(field "$TEST_TMP/outs.jsonl" 0 speedup)" None "outputs are not timed"
expect_contains "$(field "$TEST_TMP/outs.jsonl" 0 reason)" "exported test_data_set_0" "outputs reason"

# a folder that is not a task cannot be checked
pn check "$TEST_TMP/nowhere" "$TEST_TMP/same"
expect_eq "$status" 3 "status for a missing task"

# --- score: the reference (speedup s), cheat, shape, runtime ---
res="$TEST_TMP/score.jsonl"
head -n 1 "$TEST_TMP/same.jsonl" > "$res"
cat "$TEST_TMP/cheat.jsonl" "$TEST_TMP/shape.jsonl" "$TEST_TMP/runtime.jsonl" >> "$res"
pn score "$res" --json
[ "$status" -eq 0 ] || fail "score: $out"
s=$(field "$res" 0 speedup)
echo "$out" | grep '^{' | "$PY" -c '
import json, sys
s = float(sys.argv[1])
r = s                           # p = 0: a slowdown counts as s^(0+1)
got = json.loads(sys.stdin.read())
assert got["samples"] == 4, got
def near(t, want):
    es = got["es_t"][str(t)]
    assert abs(es - want) <= 1e-6 * want, "ES_%d = %r, expected %r" % (t, es, want)
near(-3, (r * 0.1 ** 3) ** 0.25)   # only the reference is correct
near(1, (r * 0.1 ** 3) ** 0.25)    # accuracy tolerated, no accuracy failure here
near(2, (r * 1 * 0.1 * 0.1) ** 0.25)   # shape tolerated from t = 2
near(3, (r * 1 * 1 * 0.1) ** 0.25)     # runtime from t = 3, cheat never
' "$s" || fail "ES_t does not match: $out"
# --p 1 --b 0.2 at t = 2: a slowdown is squared, failures score 0.2
pn score "$res" --json --p 1 --b 0.2
echo "$out" | grep '^{' | "$PY" -c '
import json, sys
s = float(sys.argv[1])
r = s if s >= 1 else s * s
es = json.loads(sys.stdin.read())["es_t"]["2"]
want = (r * 0.2 * 0.2) ** 0.25
assert abs(es - want) <= 1e-6 * want, (es, want)
' "$s" || fail "ES_2 with p = 1, b = 0.2 does not match: $out"
pn score "$res"
expect_contains "$out" "aggregate" "score table"
# these lines come from four checks, each with a seed of its own: marked
expect_contains "$out" "MIXED: 4 check seeds" "a set of four checks"
expect_contains "$out" "warning" "a warning for a mixed set"
pn score "$res" --json
echo "$out" | grep '^{' | "$PY" -c 'import json, sys
j = json.loads(sys.stdin.read())
assert j["mixed"] is True and len(j["check_seeds"]) == 4 and len(j["check_builds"]) == 1, j' ||
	fail "score --json does not mark four checks: $out"
# one check: one seed, not mixed
pn score "$TEST_TMP/same.jsonl" --json
echo "$out" | "$PY" -c 'import json, sys
j = json.loads(sys.stdin.read())
assert j["mixed"] is False and len(j["check_seeds"]) == 1, j' ||
	fail "score --json marks one check as mixed: $out"
# another build: the same lines with another check_build
sed 's/"check_build":"[0-9a-f]*"/"check_build":"0000000000000000"/' "$TEST_TMP/same.jsonl" |
	head -n 1 > "$TEST_TMP/other_build.jsonl"
cat "$TEST_TMP/same.jsonl" >> "$TEST_TMP/other_build.jsonl"
pn score "$TEST_TMP/other_build.jsonl"
expect_contains "$out" "MIXED: 2 check builds" "two builds"
echo "check: reference, cheat, frozen, shape, runtime, time limit, perturbed, outputs and score as expected"
