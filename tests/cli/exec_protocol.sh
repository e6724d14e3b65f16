# The adaptive timing protocol (exec/protocol.h) against the full one on one
# sample of gpt2_tiny's subgraphs, in three copies of a store that holds the
# calibration and the ranges (what bench/protocol.sh does at scale):
#  1. every profile names its protocol and its timing runs; full keeps T = 5
#     trials and takes at least (3 + 1 + 5) x 2 runs on 2 threads; adaptive
#     keeps 3 to 5 and takes at least 1 + 3 + 1 (one 1-thread trial far
#     from its threshold);
#  2. an adaptive profile that stopped before T trials is stable and its
#     median is further than 5% from the thresholds of slow and
#     overhead-bound (the rule, checked on what was stored);
#  3. flags that do not depend on time (fusible) are the same in all three;
#  4. bench/protocol_agree.py's agreement counts equal the ones counted
#     here from the same listings;
#  5. show prints the protocol line; an unknown protocol is refused;
#  6. under either protocol each subgraph gets one correctness run: the
#     second run and the 1-thread one it is compared with are timing's own
#     first runs (exec --json's correctness_runs, counted where the session
#     runs).
. "$ROOT/tests/cli/lib.sh"
need_corpus
base="$TEST_TMP/base"
pn --db "$base" build --no-weight-check "$CORPUS/models/gpt2_tiny"
[ "$status" -eq 0 ] || fail "build: $out"
pn --db "$base" calibrate
[ "$status" -eq 0 ] || fail "calibrate: $out"
pn --db "$base" exec --ranges-only
[ "$status" -eq 0 ] || fail "ranges: $out"
pn --db "$base" --json ls --subgraphs
# about 60 subgraphs spread over the hash order, whatever the corpus
echo "$out" | sed -n 's/^{"hash":"\([0-9a-f]*\)".*/\1/p' | sort > "$TEST_TMP/all"
awk -v t="$(wc -l < "$TEST_TMP/all")" 'int(NR * 60 / t) > int((NR - 1) * 60 / t)' "$TEST_TMP/all" > "$TEST_TMP/sample"
n=$(wc -l < "$TEST_TMP/sample")
[ "$n" -ge 20 ] || fail "sample of $n subgraphs"
for r in full_a adaptive full_b; do
	cp -r "$base" "$TEST_TMP/$r"
	p=full; [ "$r" = adaptive ] && p=adaptive
	pn --db "$TEST_TMP/$r" --json -j 2 exec --protocol "$p" --only "$TEST_TMP/sample"
	[ "$status" -eq 0 ] || fail "exec --protocol $p: $out"
	echo "$out" | grep -q "\"profiled\":$n," || fail "exec --protocol $p profiled not $n: $out"
	echo "$out" | grep -q "\"correctness_runs\":$n," ||
		fail "exec --protocol $p: not one correctness run per subgraph: $out"
	"$PASSNET" --db "$TEST_TMP/$r" --json ls --subgraphs > "$TEST_TMP/$r.json"
done
"$PY" - "$TEST_TMP" <<'PYEOF' || fail "profiles of the two protocols"
import json, os, sys
d = sys.argv[1]
sample = open(os.path.join(d, "sample")).read().split()
def load(r):
    out = {}
    for l in open(os.path.join(d, r + ".json")):
        o = json.loads(l)
        if "profile" in o:
            out[o["hash"]] = o["profile"]
    return out
runs = {r: load(r) for r in ("full_a", "adaptive", "full_b")}
for r, ps in runs.items():
    for h in sample:
        p = ps[h]
        assert p["status"] in ("ok", "unstable"), (r, h, p)
        full = r != "adaptive"
        assert p["protocol"] == ("full" if full else "adaptive"), (r, h, p)
        if full:
            assert p["trials_kept"] == 5 and p["timing_runs"] >= 18, (r, h, p)
        else:
            assert 3 <= p["trials_kept"] <= 5 and p["timing_runs"] >= 5, (r, h, p)
early = 0
for h in sample:
    p = runs["adaptive"][h]
    if p["trials_kept"] == 5 or "parallel-slowdown" in p["flags"]:
        continue
    early += 1
    m = p["median_us"]
    assert p["iqr_us"] <= 0.2 * m * 1.001, (h, p)
    for x in (10 * p.get("bound_fused_us", 0), p["overhead_us"] / 0.5):
        if x > 0:
            assert abs(m / x - 1) > 0.05 - 0.002, ("stopped near a threshold", h, x, p)
    fus = ["fusible" in runs[r][h]["flags"] for r in runs]
    assert len(set(fus)) == 1, ("fusible differs", h, fus)
assert early > 0, "no adaptive profile stopped before 5 trials"
print(f"{len(sample)} subgraphs, {early} adaptive profiles stopped early by the rule")
PYEOF
"$PY" "$ROOT/bench/protocol_agree.py" "$TEST_TMP/sample" "$TEST_TMP/full_a.json" "$TEST_TMP/full_b.json" \
	"$TEST_TMP/adaptive.json" > "$TEST_TMP/agree" || fail "protocol_agree: $(cat "$TEST_TMP/agree")"
want=$("$PY" - "$TEST_TMP" <<'PYEOF'
import json, os, sys
d = sys.argv[1]
T = {"slow", "overhead-bound", "parallel-slowdown", "unstable"}
def flags(r):
    out = {}
    for l in open(os.path.join(d, r + ".json")):
        o = json.loads(l)
        if "profile" in o:
            out[o["hash"]] = set(o["profile"]["flags"]) & T
    return out
a, c = flags("full_a"), flags("adaptive")
s = open(os.path.join(d, "sample")).read().split()
print(f"({sum(a[h] == c[h] for h in s)}/{len(s)})")
PYEOF
)
line=$(grep '^all four' "$TEST_TMP/agree")
echo "$line" | awk '{ print $6 }' | grep -qxF "$want" || fail "protocol_agree's full A ~ adaptive: $line, counted here $want"
cat "$TEST_TMP/agree"
h=$(head -1 "$TEST_TMP/sample")
pn --db "$TEST_TMP/adaptive" show "$h"
expect_contains "$out" "protocol   adaptive," "show"
pn --db "$TEST_TMP/adaptive" exec --protocol quick
[ "$status" -ne 0 ] || fail "an unknown protocol was accepted"
expect_contains "$out" "unknown protocol 'quick'" "exec --protocol quick"
