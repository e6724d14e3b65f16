# `passnet export` adds float16 and bfloat16 variants of float32 subgraphs
# (the rule in export/export.h): they appear, task.json gives each variant's
# dtype (matching its folder and its model's inputs), onnx's checker with
# full shape inference accepts every model, each dtype variant's reference
# outputs agree with its float32 variant's at ES_t level -1 of the dtype's
# ladder (inputs and weights are the float32 ones rounded; an independent
# numpy comparison), passnet reproduces and checks them, and two exports
# are byte-identical.
. "$ROOT/tests/cli/lib.sh"
need_corpus
PY=${PYTHON:-/usr/bin/python3}
db="$TEST_TMP/db"
pn --db "$db" build "$CORPUS/zoo" "$CORPUS/models/resnet18" "$CORPUS/models/mobilenet_v3_small"
[ "$status" -eq 0 ] || fail "build: $out"
pn --db "$db" exec --limit 300 --warmup 1 --trials 3
[ "$status" -eq 0 ] || fail "exec: $out"
for run in a b; do
	pn --db "$db" export --out "$TEST_TMP/$run" --tasks 40 --seed 3
	[ "$status" -eq 0 ] || fail "export $run: $out"
done
echo "$out" | tail -n 1
cmp "$TEST_TMP/a/MANIFEST.tsv" "$TEST_TMP/b/MANIFEST.tsv" || fail "two exports differ (MANIFEST.tsv)"
cd "$TEST_TMP/a"
f16=$(ls -d tasks/*/v*-f16 2>/dev/null | wc -l)
bf16=$(ls -d tasks/*/v*-bf16 2>/dev/null | wc -l)
all=$(ls -d tasks/*/v*/ | wc -l)
tasks=$(ls -d tasks/*/ | wc -l)
echo "$tasks tasks, $all variants: $f16 float16, $bf16 bfloat16"
[ "$f16" -gt 0 ] || fail "no float16 variant"
[ "$bf16" -gt 0 ] || fail "no bfloat16 variant"

# task.json: every variant folder is listed with the dtype its name and its
# model say
"$PY" - tasks <<'PYEOF' || fail "task.json dtypes do not match the variants"
import glob, json, os, sys
import onnx
names = {1: "float32", 10: "float16", 16: "bfloat16"}
bad = 0
for tj in glob.glob(sys.argv[1] + "/*/task.json"):
    d = os.path.dirname(tj)
    listed = {v["name"]: v for v in json.load(open(tj))["variants"]}
    folders = {os.path.basename(p) for p in glob.glob(d + "/v*") if os.path.isdir(p)}
    if set(listed) != folders:
        print("listed", sorted(listed), "folders", sorted(folders)); bad += 1; continue
    for name, v in listed.items():
        want = "float16" if name.endswith("-f16") else "bfloat16" if name.endswith("-bf16") else None
        m = onnx.load(os.path.join(d, name, "model.onnx"))
        elems = {names.get(i.type.tensor_type.elem_type) for i in list(m.graph.input) + list(m.graph.output)}
        if want and (v["dtype"] != want or want not in elems or "float32" in elems and want not in elems):
            print(name, v["dtype"], elems); bad += 1
        if not want and v["dtype"] in ("float16", "bfloat16"):
            print(name, v["dtype"]); bad += 1
sys.exit(bad > 0)
PYEOF

"$PY" "$ROOT/tests/fixtures/check_onnx.py" tasks/*/*/model.onnx > "$TEST_TMP/checked"
bad=$(grep -c '^bad ' "$TEST_TMP/checked" || true)
[ "$bad" -eq 0 ] || { grep '^bad ' "$TEST_TMP/checked" | head -5; fail "$bad exported models fail onnx.checker"; }
echo "$(grep -c '^ok ' "$TEST_TMP/checked") models pass onnx.checker (full_check)"

"$PY" "$ROOT/tests/fixtures/dtype_levels.py" tasks > "$TEST_TMP/levels"
n=$(wc -l < "$TEST_TMP/levels")
[ "$n" -eq $((f16 + bf16)) ] || fail "$n dtype variants compared, $((f16 + bf16)) exported"
far=$(awk '$1 == "none" || $1 == "nobase" || $1 > -1' "$TEST_TMP/levels")
[ -z "$far" ] || { echo "$far" | head -5; fail "dtype variants far from their float32 outputs"; }
echo "dtype vs float32 levels: $(awk '{print $2 "@" $1}' "$TEST_TMP/levels" | sort | uniq -c | tr -s ' \n' ' ')"

pn conformance "$TEST_TMP/a/tasks"
[ "$status" -eq 0 ] || fail "the exported test sets do not reproduce: $(echo "$out" | tail -3)"
# `passnet check` judges a dtype variant on its own dtype's ladder
task=$(dirname "$(ls -d tasks/*/v*-bf16 | head -1)")
pn -j1 check "$task" "$task" --runs 3 --out "$TEST_TMP/check.jsonl"
[ "$status" -eq 0 ] || fail "check of the reference against itself: $out"
grep -q '"dtype":"bfloat16","error_class":"none"' "$TEST_TMP/check.jsonl" || fail "no bfloat16 result in check"
pn score "$TEST_TMP/check.jsonl"
[ "$status" -eq 0 ] || fail "score: $out"
