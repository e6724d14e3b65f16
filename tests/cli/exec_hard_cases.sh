# The profiler measures the subgraphs that generated inputs make hard
# (tests/fixtures/hard_profiles.py): input dims that depend on data run at
# the assumed size and say so, a mask's -inf is not mistaken for a broken
# run, a BatchNormalization variance read through an Identity is drawn
# positive, and inputs are drawn in the ranges the models showed, so that
# Log(y - 9) after y = x + 10 and a written-out LayerNorm stay finite
# (without the ranges 11 of shifted.onnx's 54 subgraphs give NaN).
# `ls --subgraphs --flag`, `show` and `stats` report profiles.
. "$ROOT/tests/cli/lib.sh"
models="$TEST_TMP/models"
db="$TEST_TMP/db"
/usr/bin/python3 "$ROOT/tests/fixtures/hard_profiles.py" "$models" || fail "fixture maker"
# the models' own shapes: shape variants would multiply the work, not the cases
pn --db "$db" -q build --variants 0 "$models"
[ "$status" -eq 0 ] || fail "build: $out"
pn --db "$db" --json exec --warmup 1 --trials 2
[ "$status" -eq 0 ] || fail "exec: $out"
expect_contains "$out" '"ranges_models":4,"ranges_failed":0' "every model ran for its ranges"
pn --db "$db" --json exec
expect_contains "$out" '"ranges_models":0,"ranges_failed":0' "a second exec runs no model again"

pn --db "$db" --json stats
subgraphs=$(echo "$out" | sed 's/.*"subgraphs":\([0-9]*\).*/\1/')
profiled=$(echo "$out" | sed 's/.*"profiled":\([0-9]*\).*/\1/')
failed=$(echo "$out" | sed 's/.*"profile_failed":\([0-9]*\).*/\1/')
[ "$subgraphs" -gt 30 ] || fail "only $subgraphs subgraphs"
expect_eq "$profiled" "$subgraphs" "every subgraph has a profile"
pn --db "$db" ls --subgraphs --flag failed
[ "$failed" -eq 0 ] || fail "$failed profiles failed: $out"
[ -z "$out" ] || fail "ls --flag failed lists: $out"

# a cut after NonZero: its input is [?,2], run at the [n,2] of the model's
# run (n = the nonzero count of x, drawn in [0.1, 1.1): all 42 of 6 x 7)
pn --db "$db" ls --subgraphs
hash=$(echo "$out" | awk '$3 == 2 && $(NF-1) == "Cast" && $NF == "Mul" { print $1 }' | head -n 1)
[ -n "$hash" ] || fail "no Cast+Mul subgraph in: $out"
pn --db "$db" show "$hash"
expect_contains "$out" "profile    ok" "the data-dependent cut was measured"
expect_contains "$out" "[42,2]" "the shape of the model's run"
case "$out" in *assumed*) fail "a dim was assumed though the run showed it: $out" ;; esac

# the mask's -inf reaches the output of a cut that ends at the Where
pn --db "$db" ls --subgraphs
hash=$(echo "$out" | awk '$3 == 1 && $NF == "Where" { print $1 }' | head -n 1)
[ -n "$hash" ] || fail "no Where-only subgraph in: $out"
pn --db "$db" show "$hash"
expect_contains "$out" "profile    ok" "a -inf mask is not a failure"

# y = x + 10 with x in [0.1, 1.1): the Sub+Log cut's input is drawn there
pn --db "$db" ls --subgraphs
hash=$(echo "$out" | awk '$3 == 2 && / (Sub Log|Log Sub)$/ { print $1 }' | head -n 1)
[ -n "$hash" ] || fail "no Log+Sub subgraph in: $out"
pn --db "$db" show "$hash"
expect_contains "$out" "profile    ok" "Log(y - 9) was measured"
expect_contains "$out" "values in [10.1" "the range of y = x + 10 starts above 10"

# flags filter and JSON
pn --db "$db" --json ls --subgraphs --flag slow
[ -n "$out" ] || fail "no slow subgraph listed"
echo "$out" | while read -r line; do
	expect_contains "$line" '"slow"' "every listed subgraph is flagged slow"
done
pn --db "$db" ls --subgraphs --flag fast
[ "$status" -ne 0 ] || fail "an unknown flag was accepted"
expect_contains "$out" "unknown flag 'fast'" "the error names the flag"
echo "ok: $profiled subgraphs profiled, none failed"
