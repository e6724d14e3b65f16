# exec's ranges phase (every model run once, exec/ranges.h) takes at most
# half of --budget, so that exec profiles something however many models
# the store holds; the models left run in the next exec, and a subgraph
# whose models have not all run waits for them (its inputs are drawn from
# ranges that may still widen).  So:
#  1. a budget the ranges phase cannot finish in leaves models and
#     subgraphs waiting, and profiles none of the waiting ones;
#  2. budgeted execs, each running at least one model for ranges, then one
#     without a budget, end in the store of one exec without a budget
#     (mdb_dump; profiles' measured values aside, their keys must match).
. "$ROOT/tests/cli/lib.sh"
need_corpus
models=$(ls -Sr "$CORPUS"/models/*/model.onnx | head -4 | xargs -n1 dirname)
dump_no_times() {
	mdb_dump -a "$1" | awk '/^database=/ { p = ($0 == "database=profiles"); n = 0 }
		p && /^ / { n++; if (n % 2 == 0) next } { print }' > "$2" || fail "mdb_dump $1"
}
pn --db "$TEST_TMP/base" build --variants 0 $models
[ "$status" -eq 0 ] || fail "build: $out"
pn --db "$TEST_TMP/base" calibrate
[ "$status" -eq 0 ] || fail "calibrate: $out"
cp -r "$TEST_TMP/base" "$TEST_TMP/one"
cp -r "$TEST_TMP/base" "$TEST_TMP/budget"
field() { echo "$out" | sed -n "s/.*\"$1\":\([0-9]*\).*/\1/p" | head -n 1; }

# 1. a budget of 2 ms: the ranges phase stops before it has run every model
pn --db "$TEST_TMP/budget" --json exec --strategy fusion --min-nodes 2 --warmup 0 --trials 1 --budget 0.002
[ "$status" -eq 0 ] || fail "exec --budget: $out"
left=$(field ranges_left) waiting=$(field waiting_ranges) profiled=$(field profiled)
[ "${left:-0}" -ge 1 ] || fail "the ranges phase finished in 1 ms: $out"
[ "${waiting:-0}" -ge 1 ] || fail "no subgraph waits for its ranges: $out"
echo "1. --budget 0.002: $left models left for ranges, $waiting subgraphs wait, $profiled profiled"

# 2. budgeted execs until every model has run for ranges (one model at
# least per exec), then one without a budget for what is left to profile
runs=1
while [ "${left:-0}" -gt 0 ]; do
	[ "$runs" -lt 100 ] || fail "exec --budget 2 never ran every model: $out"
	pn --db "$TEST_TMP/budget" --json exec --strategy fusion --min-nodes 2 --warmup 0 --trials 1 --budget 2
	[ "$status" -eq 0 ] || fail "exec --budget 2: $out"
	new_left=$(field ranges_left)
	[ "${new_left:-0}" -lt "$left" ] || fail "a budgeted exec ran no model for ranges: $out"
	left=$new_left
	runs=$((runs + 1))
done
pn --db "$TEST_TMP/budget" --json exec --strategy fusion --min-nodes 2 --warmup 0 --trials 1
[ "$status" -eq 0 ] || fail "exec after the budgeted ones: $out"
pn --db "$TEST_TMP/one" --json exec --strategy fusion --min-nodes 2 --warmup 0 --trials 1
[ "$status" -eq 0 ] || fail "exec: $out"
dump_no_times "$TEST_TMP/budget" "$TEST_TMP/budget.dump"
dump_no_times "$TEST_TMP/one" "$TEST_TMP/one.dump"
cmp -s "$TEST_TMP/budget.dump" "$TEST_TMP/one.dump" ||
	fail "$runs budgeted execs and one more end in another store than one exec without a budget"
echo "2. $runs budgeted execs (each ran models for ranges) and one more end in the store of one exec"
echo "exec_budget_ranges: ok"
