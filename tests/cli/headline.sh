# The compiler-regression headline (exec/headline.h): "X% of N timed
# subgraphs are slower with ONNX Runtime's default optimisations than
# without (published: 43% under TorchInductor)", with the share by size and
# by strategy, as `passnet baseline`, `passnet stats` (text and --json) and
# the report's first section print it.  The expected figures are computed
# here from `passnet ls --subgraphs --json` (each subgraph's profile flags,
# ORT status, node count and the strategies whose cuts found it), not from
# the code that prints them.
#  1. no ORT library (PASSNET_ORT_LIB names a missing file): baseline exits
#     1 and every place says the baseline was not measured, never "0%";
#  2. real ORT (build/ort or npm's onnxruntime-node) on the fixture models
#     of ort_baseline.sh and a 10-node residual chain: the figures agree
#     with ls's everywhere;
#  3. synthetic baselines (mkprofiles --ort: a third of the timed ones
#     regressions, so the shares are not all 0): the same, and a baseline
#     that cannot open ORT still prints the store's figures.
. "$ROOT/tests/cli/lib.sh"
need_ort_lib
MKPROFILES=${MKPROFILES:-$ROOT/build/tools/mkprofiles}
[ -x "$MKPROFILES" ] || fail "no $MKPROFILES (make build/tools/mkprofiles)"
models="$TEST_TMP/models"
"$PY" "$ROOT/tests/fixtures/ort_models.py" "$models" || fail "ort_models.py failed"
# Conv -> Relu -> Conv -> Add (residual) -> Relu -> Conv -> Sigmoid -> Mul
# -> MatMul -> Tanh: enough nodes for every strategy and four size groups
"$PY" - "$models/chain.onnx" <<'PYEOF' || fail "chain model"
import sys
import numpy as np
import onnx
from onnx import TensorProto as T, helper as h, numpy_helper as nh
rng = np.random.default_rng(1)
def w(name, shape):
    return nh.from_array(rng.standard_normal(shape).astype(np.float32), name)
inits = [w("W1", (8, 3, 3, 3)), w("W2", (8, 8, 3, 3)), w("W3", (8, 8, 1, 1)), w("M", (16, 16))]
nodes = [
    h.make_node("Conv", ["x", "W1"], ["c1"], pads=[1, 1, 1, 1]),
    h.make_node("Relu", ["c1"], ["r1"]),
    h.make_node("Conv", ["r1", "W2"], ["c2"], pads=[1, 1, 1, 1]),
    h.make_node("Add", ["c2", "r1"], ["a1"]),
    h.make_node("Relu", ["a1"], ["r2"]),
    h.make_node("Conv", ["r2", "W3"], ["c3"]),
    h.make_node("Sigmoid", ["c3"], ["s1"]),
    h.make_node("Mul", ["c3", "s1"], ["m1"]),
    h.make_node("MatMul", ["m1", "M"], ["mm"]),
    h.make_node("Tanh", ["mm"], ["y"]),
]
g = h.make_graph(nodes, "chain", [h.make_tensor_value_info("x", T.FLOAT, [1, 3, 16, 16])],
                 [h.make_tensor_value_info("y", T.FLOAT, [1, 8, 16, 16])], inits)
m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
onnx.checker.check_model(m)
onnx.save(m, sys.argv[1])
PYEOF

# The expected headline of a store from ls: prints three lines (the
# sentence, "by size: ...", "by strategy: ...") into $TEST_TMP/expected,
# the counts as JSON into $TEST_TMP/expected.json, and checks the
# report's headline tables against them.
cat >"$TEST_TMP/expect.py" <<'PYEOF'
import json, re, sys
ls_out, report = sys.argv[1], sys.argv[2]
sizes = ["1 node", "2 nodes", "3-4 nodes", "5-8 nodes", "9-16 nodes", "17+ nodes"]
def size(n):
    return sizes[0 if n <= 1 else 1 if n == 2 else 2 if n <= 4 else 3 if n <= 8 else
                 4 if n <= 16 else 5]
timed = reg = 0
by_size = {s: [0, 0] for s in sizes}
by_strat = {}
for line in open(ls_out):
    o = json.loads(line)
    p = o.get("profile", {})
    if p.get("ort", {}).get("status") != "ok":
        continue
    r = int("compiler-regression" in p["flags"])
    timed += 1
    reg += r
    by_size[size(o["nodes"])][0] += 1
    by_size[size(o["nodes"])][1] += r
    for s, n in o["strategies"].items():
        if n > 0:
            by_strat.setdefault(s, [0, 0])
            by_strat[s][0] += 1
            by_strat[s][1] += r
assert timed > 0, "nothing timed"
def groups(d, order):
    return "; ".join("%s %.1f%% of %d" % (k, 100.0 * d[k][1] / d[k][0], d[k][0])
                     for k in order if k in d and d[k][0])
strats = json.load(open(sys.argv[3]))   # stats --json: the catalogue's order
order = list(strats["strategies"])
lines = ["%.1f%% of %d timed subgraphs are slower with ONNX Runtime's default optimisations "
         "than without (published: 43%% under TorchInductor)" % (100.0 * reg / timed, timed),
         "by size: " + groups(by_size, sizes), "by strategy: " + groups(by_strat, order)]
open(sys.argv[4], "w").write("\n".join(lines) + "\n")
json.dump({"timed": timed, "regressions": reg, "by_strategy": by_strat,
           "by_size": {k: v for k, v in by_size.items() if v[0]}}, open(sys.argv[4] + ".json", "w"))
# the stats --json headline
hl = strats["headline"]
assert hl["measured"] is True and hl["timed"] == timed and hl["regressions"] == reg, hl
assert abs(hl["share"] - reg / timed) < 1e-4 and hl["line"] == lines[0], hl
assert {k: [v["timed"], v["regressions"]] for k, v in hl["by_strategy"].items() if v["timed"]} \
    == by_strat, (hl["by_strategy"], by_strat)
assert {k: [v["timed"], v["regressions"]] for k, v in hl["by_size"].items() if v["timed"]} \
    == {k: v for k, v in by_size.items() if v[0]}, hl["by_size"]
# the report's first section: the sentence and both tables
page = open(report).read()
first = re.search(r'<section id="headline">.*?</section>', page, re.S).group(0)
assert first == re.search(r"<section .*?</section>", page, re.S).group(0), "not the first section"
sentence = lines[0].replace("'", "&#39;")
assert '<p class="headline" id="ort-headline">%s</p>' % sentence in first, first
def rows(tid):
    t = re.search(r'<table id="%s">.*?</table>' % tid, first, re.S).group(0)
    return {m[0]: [int(m[2]), int(m[1]), m[3]] for m in re.findall(
        r'<tr><td>([^<]*)</td><td class="n">(\d+)</td><td class="n">(\d+)</td>'
        r'<td class="n">([^<]*)</td></tr>', t)}
def want(d):
    return {k: [v[0], v[1], "%.1f%%" % (100.0 * v[1] / v[0])] for k, v in d.items() if v[0]}
assert rows("ort-headline-by-strategy") == want(by_strat), (rows("ort-headline-by-strategy"), by_strat)
assert rows("ort-headline-by-size") == want(by_size), rows("ort-headline-by-size")
print("timed %d regressions %d strategies %s" % (timed, reg, json.dumps(by_strat, sort_keys=True)))
PYEOF

# has_line TEXT LINE WHAT: LINE is a whole line of TEXT
has_line() {
	printf '%s\n' "$1" | grep -qxF -- "$2" || fail "$3: no line '$2' in: $1"
}

# check_headline DB BASELINE_OUTPUT: baseline's, stats' and the report's
# figures against ls's
check_headline() {
	pn --db "$1" --json ls --subgraphs
	[ "$status" -eq 0 ] || fail "ls: $out"
	printf '%s\n' "$out" >"$TEST_TMP/ls.jsonl"
	pn --db "$1" --json stats
	[ "$status" -eq 0 ] || fail "stats --json: $out"
	printf '%s\n' "$out" >"$TEST_TMP/stats.json"
	pn --db "$1" report --out "$TEST_TMP/report"
	[ "$status" -eq 0 ] || fail "report: $out"
	"$PY" "$TEST_TMP/expect.py" "$TEST_TMP/ls.jsonl" "$TEST_TMP/report/index.html" \
		"$TEST_TMP/stats.json" "$TEST_TMP/expected" || fail "stats --json or the report differ from ls"
	pn --db "$1" stats --brief
	stats_out=$out
	while IFS= read -r want; do
		has_line "$2" "baseline: $want" "baseline's summary"
		has_line "$stats_out" "headline    $want" "stats --brief"
	done <"$TEST_TMP/expected"
	pn --db "$1" stats
	expect_contains "$out" "headline    $(head -1 "$TEST_TMP/expected")" "stats"
}

# 1. no library: not measured, everywhere
db="$TEST_TMP/db"
pn --db "$db" build --variants 0 "$models"
[ "$status" -eq 0 ] || fail "build: $out"
pn --db "$db" exec --warmup 1 --trials 3
[ "$status" -eq 0 ] || fail "exec: $out"
missing="$TEST_TMP/no-such-dir/libonnxruntime.so.1"
export PASSNET_ORT_LIB="$missing"
pn --db "$db" baseline
expect_eq "$status" 1 "baseline without the library"
expect_contains "$out" "cannot open ONNX Runtime: $missing" "the missing library named"
not_measured="ONNX Runtime baseline not measured: no subgraph has been timed by ORT"
expect_contains "$out" "baseline: $not_measured" "baseline's summary without ORT"
case "$out" in *"timed subgraphs are slower"*) fail "a share without a baseline: $out" ;; esac
pn --db "$db" --json baseline
expect_eq "$status" 1 "baseline --json without the library"
printf '%s\n' "$out" | grep '^{' | "$PY" -c '
import json, sys
o = json.load(sys.stdin)
h = o["headline"]
assert "cannot open ONNX Runtime" in o["error"], o
assert h["measured"] is False and h["share"] is None and h["timed"] == 0, h
assert h["line"].startswith("ONNX Runtime baseline not measured"), h' || fail "baseline --json: $out"
pn --db "$db" stats --brief
expect_contains "$out" "headline    $not_measured" "stats --brief without ORT"
case "$out" in *"timed subgraphs are slower"*) fail "stats: a share without a baseline: $out" ;; esac
pn --db "$db" --json stats
printf '%s\n' "$out" | "$PY" -c '
import json, sys
h = json.load(sys.stdin)["headline"]
assert h["measured"] is False and h["share"] is None and h["baselines"] == 0, h' ||
	fail "stats --json without ORT: $out"
pn --db "$db" report --out "$TEST_TMP/report0"
[ "$status" -eq 0 ] || fail "report: $out"
grep -qF "<p class=\"headline\" id=\"ort-headline\">$not_measured" "$TEST_TMP/report0/index.html" ||
	fail "the report does not say the baseline was not measured"
! grep -q 'id="ort-headline-by-strategy"' "$TEST_TMP/report0/index.html" ||
	fail "the report has shares without a baseline"
unset PASSNET_ORT_LIB

# 2. ONNX Runtime itself
pn --db "$db" baseline --ort-lib "$lib"
[ "$status" -eq 0 ] || fail "baseline: $out"
check_headline "$db" "$out"
echo "real ORT: $(tail -1 "$TEST_TMP/expected")"
# a second run times nothing and still gives the store's headline
pn --db "$db" baseline --ort-lib "$lib"
expect_contains "$out" ": 0 subgraphs timed" "nothing to time again"
expect_contains "$out" "baseline: $(head -1 "$TEST_TMP/expected")" "the headline of a run that timed none"

# 3. synthetic baselines: regressions known to be there
db2="$TEST_TMP/db2"
pn --db "$db2" build --variants 0 "$models"
[ "$status" -eq 0 ] || fail "build: $out"
line=$("$MKPROFILES" --ort "$db2") || fail "mkprofiles --ort: $line"
set -- $line
[ "$9 ${11}" = "ort regressions" ] || fail "mkprofiles said: $line"
n_timed=${10} n_reg=${12}
[ "$n_reg" -ge 3 ] && [ "$n_timed" -gt "$n_reg" ] || fail "too few synthetic regressions: $line"
pn --db "$db2" baseline --ort-lib "$TEST_TMP/missing.so"
expect_eq "$status" 1 "baseline without the library"
check_headline "$db2" "$out"
expect_contains "$(head -1 "$TEST_TMP/expected")" "% of $n_timed timed" "mkprofiles' timed count"
"$PY" - "$TEST_TMP/expected.json" "$n_reg" <<'PYEOF' || fail "synthetic shares"
import json, sys
e = json.load(open(sys.argv[1]))
assert e["regressions"] == int(sys.argv[2]), e
# some strategy and some size group with a regression, and one share not 0 or 100%
with_reg = [k for k, v in e["by_strategy"].items() if v[1]]
assert len(with_reg) >= 2, e["by_strategy"]
assert any(0 < v[1] < v[0] for v in e["by_strategy"].values()), e["by_strategy"]
PYEOF
echo "synthetic: $(tail -1 "$TEST_TMP/expected")"
echo "headline: ok"
