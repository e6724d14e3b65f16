# Manifest groups: "[NAME]" lines group the sources after them; the store
# keeps each source's group, and `stats` (text, --brief, --json) and the
# report count models and subgraphs per group, a subgraph once in every group
# one of its models is in.  A malformed group line is a one-line error
# naming the manifest and the line.
. "$ROOT/tests/cli/lib.sh"
py=/usr/bin/python3
mkdir -p "$TEST_TMP/a" "$TEST_TMP/b"
"$py" "$ROOT/tests/fixtures/nested_branches.py" "$TEST_TMP/a/big.onnx" || fail "fixture"
"$py" "$ROOT/tests/fixtures/nested_branches.py" "$TEST_TMP/b/small.onnx" small || fail "fixture"
# the same model in both groups: it counts once in the store, in its
# canonical place's group (the least source name, "one")
cp "$TEST_TMP/a/big.onnx" "$TEST_TMP/b/big-again.onnx"
cat >"$TEST_TMP/m.txt" <<'EOT'
ungrouped  dir  a  -  MIT  before any group line
[trained-models]
one  dir  a  -  MIT  first
[op-tests]
two  dir  b  -  MIT  second
EOT
db="$TEST_TMP/db"
pn --db "$db" build --manifest "$TEST_TMP/m.txt"
[ "$status" -eq 0 ] || fail "build: $out"
pn --db "$db" stats --brief
echo "$out"
expect_contains "$out" "group trained-models: 1 sources, 1 models," "the trained-models group"
expect_contains "$out" "group op-tests: 1 sources, 1 models," "the op-tests group (big-again is one's model)"
expect_contains "$out" "group (no group): 1 sources, 0 models," "a source before any group line"
pn --db "$db" show two
expect_contains "$out" "source     two" "show SOURCE"
pn --db "$db" --json stats
printf '%s\n' "$out" >"$TEST_TMP/stats.json"
"$py" - "$TEST_TMP/stats.json" <<'EOT' || fail "stats --json groups"
import json, sys
g = {x["group"]: x for x in json.load(open(sys.argv[1]))["groups"]}
assert set(g) == {"trained-models", "op-tests", "(no group)"}, g
assert g["trained-models"]["models"] == 1 and g["op-tests"]["models"] == 1, g
# every unique subgraph is in some group; the two models share some
total = sum(x["subgraphs"] for x in g.values())
assert g["trained-models"]["subgraphs"] > 0 and g["op-tests"]["subgraphs"] > 0, g
print("groups ok:", {k: v["subgraphs"] for k, v in g.items()}, "total", total)
EOT
pn --db "$db" report --out "$TEST_TMP/report"
[ "$status" -eq 0 ] || fail "report: $out"
grep -q '<td>trained-models</td>' "$TEST_TMP/report/index.html" || fail "report has no trained-models row"
grep -q '<td>op-tests</td>' "$TEST_TMP/report/index.html" || fail "report has no op-tests row"

printf 'x dir a - MIT\n[bad name]\n' >"$TEST_TMP/bad.txt"
pn --db "$TEST_TMP/db2" extract --manifest "$TEST_TMP/bad.txt"
[ "$status" -ne 0 ] || fail "a bad group line was accepted"
expect_contains "$out" "bad.txt:2: bad group name 'bad name'" "the error names file, line and problem"
[ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ] || fail "more than one line: $out"
echo "groups: counted apart in stats, --json and the report"
