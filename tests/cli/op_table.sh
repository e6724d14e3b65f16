# runtime/op_table.c finds each op's cost function through
# runtime/ops/costs.def: a pn_cost_<Op> that the executor's objects define
# but costs.def does not list would never be called (the op would cost
# what pn_cost_default says), and nothing else would notice.  So the set
# of pn_cost_<Op> functions (an op name: capitalised; the helpers are not)
# defined in build/obj/runtime must be the set
# costs.def lists (one listed but not defined fails the link already).
. "$ROOT/tests/cli/lib.sh"
cd "$ROOT"
[ -d build/obj/runtime ] || fail "no build/obj/runtime (make all first)"

# missing DEFINED LISTED: the names of DEFINED that LISTED lacks
missing() { comm -23 "$1" "$2"; }

# 1. the check itself can fail: a cost function of a made-up op, defined
# and not listed, is found
printf 'pn_cost_Conv\npn_cost_NotListed\n' > "$TEST_TMP/defined.fake"
printf 'pn_cost_Conv\n' > "$TEST_TMP/listed.fake"
expect_eq "$(missing "$TEST_TMP/defined.fake" "$TEST_TMP/listed.fake")" pn_cost_NotListed \
	"a cost function left out of the list"

# 2. the real tree
find build/obj/runtime -name '*.o' -exec nm --defined-only {} + |
	awk '$2 == "T" && $3 ~ /^pn_cost_[A-Z]/ { print $3 }' | sort -u > "$TEST_TMP/defined"
sed -n 's/^COST(\([A-Za-z0-9_]*\))$/pn_cost_\1/p' runtime/ops/costs.def | sort -u > "$TEST_TMP/listed"
n=$(wc -l < "$TEST_TMP/defined")
[ "$n" -ge 100 ] || fail "only $n pn_cost_ functions found in build/obj/runtime"
left=$(missing "$TEST_TMP/defined" "$TEST_TMP/listed")
[ -z "$left" ] || fail "cost functions defined but not in runtime/ops/costs.def (never called): $left"
echo "op_table: $n cost functions defined, each listed in runtime/ops/costs.def"
