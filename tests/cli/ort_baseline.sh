# passnet exec --baseline ort and passnet baseline: ONNX Runtime (the
# libonnxruntime.so.1 of npm's onnxruntime-node, which `make ort` copies to
# build/ort/) timed at graph optimisation level ALL and with optimisations
# disabled on every profiled subgraph.
#  - Conv -> BatchNormalization -> Relu (tests/fixtures/ort_models.py): ORT
#    fuses the BatchNormalization into the Conv, so its optimised graph of
#    the Conv+BatchNormalization subgraph (the op types ORT writes out at
#    each level) has no BatchNormalization at ALL and keeps it disabled;
#    both levels run and agree with passnet's outputs;
#  - a Concat of an empty rank-1 constant with a rank-3 tensor, which ORT
#    refuses at load: recorded as refused with ORT's message, the profile
#    still ok;
#  - an If whose branches give ranks 3 and 2, then Relu -> Sigmoid: the
#    subgraphs' boundaries have a rank that depends on data, and ORT times
#    them all (they used to be skipped), agreeing with passnet;
#  - --ort-lib /nonexistent: one clear line, exit 1, exec's own profiles
#    committed as without --baseline, the headline (tests/cli/headline.sh)
#    not measured;
#  - everything but times is the same in a second store built the same way
#    and baselined by `passnet baseline` (instead of exec --baseline ort).
. "$ROOT/tests/cli/lib.sh"
need_ort_lib
models="$TEST_TMP/models"
"$PY" "$ROOT/tests/fixtures/ort_models.py" "$models" || fail "ort_models.py failed"

# subgraph_of DB OPS: the hash of the subgraph whose op list is exactly OPS
subgraph_of() {
	pn --db "$1" ls --subgraphs
	h=$(printf '%s\n' "$out" | awk -v ops="$2" '{ o = ""; for (i = 9; i <= NF; i++) o = o (o ? " " : "") $i; if (o == ops) print $1 }' | head -1)
	[ -n "$h" ] || fail "no subgraph of ops '$2' in: $out"
	echo "$h"
}

# 1. a missing library: exec profiles as ever, then one line and exit 1
db0="$TEST_TMP/db0"
pn --db "$db0" build --variants 0 "$models"
[ "$status" -eq 0 ] || fail "build: $out"
pn --db "$db0" exec --warmup 0 --trials 1 --baseline ort --ort-lib /nonexistent/libonnxruntime.so.1
[ "$status" -eq 1 ] || fail "exec --ort-lib /nonexistent exited $status, not 1: $out"
expect_contains "$out" "exec: baseline ort: cannot open ONNX Runtime: /nonexistent/libonnxruntime.so.1" \
	"the missing library named"
n_err=$(printf '%s\n' "$out" | grep -c "cannot open ONNX Runtime" || true)
expect_eq "$n_err" 1 "one line about the missing library"
expect_contains "$out" "baseline: ONNX Runtime baseline not measured" "the headline not measured"
expect_contains "$out" "subgraphs profiled (0 failed" "exec's own profiles"
pn --db "$db0" ls --subgraphs
n_sub=$(printf '%s\n' "$out" | grep -c ' us ' || true)
[ "$n_sub" -ge 6 ] || fail "profiles not stored after the missing library: $out"
h=$(subgraph_of "$db0" "BatchNormalization Conv")
pn --db "$db0" show "$h"
case "$out" in *"  ort "*) fail "a baseline without the library: $out" ;; esac
# measured, not failed (unstable is a matter of the machine's load)
profile_measured() {
	case "$out" in *"profile    ok"* | *"profile    unstable"*) ;; *) fail "$1: not measured: $out" ;; esac
}
profile_measured "the profile itself"
pn --db "$db0" baseline --ort-lib /nonexistent/libonnxruntime.so.1
[ "$status" -eq 1 ] || fail "baseline without the library exited $status"
expect_contains "$out" "baseline: baseline ort: cannot open ONNX Runtime" "passnet baseline's line"
pn --db "$db0" baseline --ort-lib "$ROOT/README.md"
[ "$status" -eq 1 ] || fail "baseline of a file that is not a library exited $status"
expect_contains "$out" "README.md" "the file that is not ORT named"

# 2. exec --baseline ort
db="$TEST_TMP/db"
pn --db "$db" build --variants 0 "$models"
[ "$status" -eq 0 ] || fail "build: $out"
pn --db "$db" exec --warmup 1 --trials 3 --baseline ort --ort-lib "$lib"
[ "$status" -eq 0 ] || fail "exec --baseline ort: $out"
echo "$out" | grep '^baseline:'
expect_contains "$out" "baseline: ONNX Runtime 1." "the ORT version"
refused=$(printf '%s\n' "$out" | sed -n 's/^baseline: .* timed (\([0-9]*\) refused by ORT.*/\1/p')
[ "${refused:-0}" -ge 1 ] || fail "no subgraph refused by ORT: $out"
expect_contains "$out" " 0 skipped, 0 disagree with passnet" "every subgraph run and agreeing"

# the fused Conv+BatchNormalization
h=$(subgraph_of "$db" "BatchNormalization Conv")
pn --db "$db" show "$h"
echo "$out" | grep '  ort'
expect_contains "$out" "  ort        ONNX Runtime 1." "a baseline stored"
expect_contains "$out" ", ok" "ORT ran it"
expect_contains "$out" "agrees with passnet" "ORT's outputs against passnet's"
expect_contains "$out" "  ort eager  Conv BatchNormalization" "ORT's graph with optimisations disabled"
ops_all=$(printf '%s\n' "$out" | sed -n 's/^  ort ALL    //p')
expect_contains "$ops_all" "Conv" "ORT's optimised graph"
case "$ops_all" in *BatchNormalization*) fail "ORT did not fuse Conv+BatchNormalization: $ops_all" ;; esac
expect_contains "$out" "threshold  compiler-regression: ort.median_all > 1.1 x ort.median_disabled" \
	"compiler-regression's threshold"
expect_contains "$out" "threshold  compiler-gap: ort.median_all > 10 x bound_fused" "compiler-gap's threshold"
expect_contains "$out" "ort ratio  ORT ALL / passnet (1 thread) " "the ratio"

# the Concat ORT refuses: its message, the profile still ok
h=$(subgraph_of "$db" "Concat")
pn --db "$db" show "$h"
profile_measured "passnet's profile of the Concat"
expect_contains "$out" "refused: Node (n0) Op (Concat) [ShapeInferenceError] All inputs to Concat must have same rank" \
	"ORT's message"
case "$out" in *"ort time"*) fail "times for a refused subgraph: $out" ;; esac

# boundaries of unknown rank: ORT given tensors without a shape
h=$(subgraph_of "$db" "Relu Sigmoid")
pn --db "$db" show "$h"
expect_contains "$out" "  input     v1  float32[?*]" "the Relu's input of unknown rank"
expect_contains "$out" ", ok" "ORT ran the subgraph of unknown rank"
expect_contains "$out" "agrees with passnet" "ORT's outputs of unknown rank against passnet's"

# a second run finds nothing left to do
pn --db "$db" baseline --ort-lib "$lib"
[ "$status" -eq 0 ] || fail "second baseline: $out"
expect_contains "$out" ": 0 subgraphs timed" "nothing to time again"

# stats: the compiler-regression share over the subgraphs ORT timed
pn --db "$db" --json stats
[ "$status" -eq 0 ] || fail "stats: $out"
n_reg=$(printf '%s\n' "$out" | "$PY" -c 'import json,sys; o=json.load(sys.stdin)["ort"]; print(o["compiler_regression"])')
shares=$(printf '%s\n' "$out" | "$PY" -c '
import json, sys
o = json.load(sys.stdin)["ort"]
assert o["baselines"] == 18 and o["refused"] == 4 and o["timed"] == 14, o
assert abs(o["compiler_regression_share"] - o["compiler_regression"] / o["timed"]) < 1e-4, o
assert sum(o["regressions_by_size"].values()) == o["compiler_regression"], o
print("ok")') || fail "stats --json ort: $out"
pn --db "$db" stats
expect_contains "$out" "ort         18 baselines (ONNX Runtime 1." "stats' baseline line"
expect_contains "$out" "compiler-regression: $n_reg of 14 timed" "stats' compiler-regression share"

# report: the compiler-baseline section agrees with stats, and its scatter
# of ORT-ALL against ORT-disabled has one point per subgraph ORT timed (the
# legend counts every point; points on one pixel are drawn once), the
# regressions in their own class
pn --db "$db" report --out "$TEST_TMP/report"
[ "$status" -eq 0 ] || fail "report: $out"
"$PY" - "$TEST_TMP/report/index.html" "$n_reg" <<'PYEOF' || fail "the report's ORT section"
import re, sys
import xml.etree.ElementTree as ET
page, n_reg = open(sys.argv[1]).read(), int(sys.argv[2])
def card(i):
    return re.search(r'id="%s">([^<]*)<' % i, page).group(1)
assert card("ort-baselines") == "18" and card("ort-timed") == "14", page
assert card("ort-refused") == "4" and card("ort-skipped") == "0", (card("ort-refused"), card("ort-skipped"))
assert card("ort-regressions") == str(n_reg), (card("ort-regressions"), n_reg)
assert card("ort-regression-share") == "%.1f%%" % (100.0 * n_reg / 14), card("ort-regression-share")
svg = re.search(r'<svg [^>]*id="ort-all-vs-disabled".*?</svg>', page, re.S).group(0)
root = ET.fromstring(svg)
ns = "{http://www.w3.org/2000/svg}"
texts = ["".join(t.itertext()) for t in root.iter(ns + "text")]
legend = {m.group(1): int(m.group(2)) for t in texts for m in [re.match(r"(.*) \((\d+)\)$", t)] if m}
assert legend == {"no regression": 14 - n_reg, "compiler regression": n_reg}, legend
assert "ALL = disabled" in texts, texts
circles = [c for c in root.iter(ns + "circle")]
assert 2 + 1 <= len(circles) <= 2 + 14, len(circles)   # the legend's two, then the points
size = re.search(r'<table id="ort-by-size">.*?</table>', page, re.S).group(0)
rows = re.findall(r'<tr><td>([^<]*)</td><td class="n">(\d+)</td><td class="n">(\d+)</td>', size)
assert sum(int(t) for _, _, t in rows) == 14 and sum(int(g) for _, g, _ in rows) == n_reg, rows
assert 'id="ort-by-ops"' in page, "the op-set table"
assert "why ORT did not time them" in page and "All inputs to Concat must have same rank" in page, "the refusals' kinds"
print("report ok")
PYEOF

# export: every variant carries its ORT baseline; --flag compiler-regression
# selects on the flag
pn --db "$db" export --out "$TEST_TMP/set" --tasks 20
[ "$status" -eq 0 ] || fail "export: $out"
"$PY" - "$TEST_TMP/set" <<'PYEOF' || fail "task.json without the ORT baseline"
import glob, json, sys
n_ok = 0
files = sorted(glob.glob(sys.argv[1] + "/tasks/*/task.json"))
assert files, "no task.json"
for f in files:
    for v in json.load(open(f))["variants"]:
        o = v["ort"]
        assert o["version"].startswith("1.") and o["status"] in ("ok", "refused"), (f, v)
        if o["status"] == "ok":
            assert o["median_all_us"] > 0 and o["median_disabled_us"] > 0, (f, v)
            n_ok += 1
assert n_ok > 0, "no variant ORT timed"
PYEOF
pn --db "$db" export --out "$TEST_TMP/set-reg" --flag compiler-regression
[ "$status" -eq 0 ] || fail "export --flag compiler-regression: $out"
"$PY" - "$TEST_TMP/set-reg" <<'PYEOF' || fail "export --flag compiler-regression took an unflagged task"
import glob, json, sys
for f in glob.glob(sys.argv[1] + "/tasks/*/task.json"):
    t = json.load(open(f))
    assert "compiler-regression" in t["flags"], (f, t["flags"])
PYEOF

# 3. determinism: a second store, exec then passnet baseline; every field
# but the times (and the flags that judge them) is the same
db2="$TEST_TMP/db2"
pn --db "$db2" build --variants 0 "$models"
pn --db "$db2" exec --warmup 1 --trials 3
[ "$status" -eq 0 ] || fail "exec: $out"
pn --db "$db2" baseline --ort-lib "$lib"
[ "$status" -eq 0 ] || fail "baseline: $out"
fields() {
	pn --db "$1" ls --subgraphs
	for h in $(printf '%s\n' "$out" | awk '{print $1}' | sort); do
		pn --db "$1" show "$h"
		printf '%s\n' "$out" | grep -E '^  ort (      |nodes|check|ALL |eager)' | sed "s/^/$h /"
	done
}
fields "$db" >"$TEST_TMP/f1"
fields "$db2" >"$TEST_TMP/f2"
[ "$(wc -l <"$TEST_TMP/f1")" -ge 18 ] || fail "too few baseline fields: $(cat "$TEST_TMP/f1")"
cmp -s "$TEST_TMP/f1" "$TEST_TMP/f2" || fail "baselines differ: $(diff "$TEST_TMP/f1" "$TEST_TMP/f2")"
echo "ort_baseline: ok"
