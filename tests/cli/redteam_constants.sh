# Over a whole export (the fixture corpus, or the shared one under
# `make test-corpus`), the candidate made of Constant nodes holding each
# variant's exported outputs (tests/cli/constant_candidates.py) is rejected
# on every variant: no line with error_class none or a pass level.  Before
# the export kept only variants whose outputs follow their drawn inputs,
# and before check seeds no one knows, such candidates passed some variants.
. "$ROOT/tests/cli/lib.sh"
need_corpus
PY=${PYTHON:-/usr/bin/python3}
db="$TEST_TMP/db"
set_dir="$TEST_TMP/set"

pn --db "$db" build "$CORPUS/zoo" "$CORPUS/models/resnet18" "$CORPUS/models/mobilenet_v2"
[ "$status" -eq 0 ] || fail "build: $out"
pn --db "$db" exec --strategy fusion --min-nodes 2 --limit 250 --warmup 1 --trials 3
[ "$status" -eq 0 ] || fail "exec: $out"
pn --db "$db" export --out "$set_dir" --tasks 30 --variants 4 --seed 7
[ "$status" -eq 0 ] || fail "export: $out"

counts=$("$PY" "$ROOT/tests/cli/constant_candidates.py" "$set_dir" "$TEST_TMP/cand") ||
	fail "building the constant candidates"
set -- $counts
made=$1
[ "$made" -ge 20 ] || fail "constant candidates for only $made variants: the test proves little"

res="$TEST_TMP/results.jsonl"
for t in "$TEST_TMP"/cand/*/; do
	task=$(basename "$t")
	pn -j1 check "$set_dir/tasks/$task" "$t" --runs 1 --out "$res"
	[ "$status" -eq 1 ] || fail "check of the constants of $task: status $status: $out"
done
"$PY" - "$res" "$made" <<'PYEOF' || fail "a constant candidate was not rejected"
import collections, json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
assert len(lines) == int(sys.argv[2]), "%d results for %s candidates" % (len(lines), sys.argv[2])
passed = [l for l in lines if l["error_class"] == "none" or l["pass_level"] is not None]
assert not passed, passed
print("constants rejected on all %d variants: %s" % (len(lines), dict(
    collections.Counter(l["error_class"] for l in lines))))
PYEOF
