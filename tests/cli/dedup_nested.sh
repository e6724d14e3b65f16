# Control flow nested two deep: an If inside an If branch reading a value of
# the main graph through both scopes and one computed in the outer branch,
# and a Constant in a branch too large to keep by value.  Every subgraph cut
# from it decodes back into a graph that hashes to its key (doctor --deep),
# and `show` prints each (it decodes the canonical bytes too).  Listing
# then_branch before else_branch in the file (as PyTorch does) changes no
# hash, and the captures stay with their branch.
. "$ROOT/tests/cli/lib.sh"
py=/usr/bin/python3
for variant in large small then-first; do
m="$TEST_TMP/nested-$variant.onnx"
"$py" "$ROOT/tests/fixtures/nested_branches.py" "$m" $variant || fail "fixture"
db="$TEST_TMP/db-$variant"
pn --db "$db" build "$m"
[ "$status" -eq 0 ] || fail "build: $out"
pn --db "$db" doctor --deep
echo "$out"
[ "$status" -eq 0 ] || fail "doctor --deep ($variant): $out"
pn --db "$db" ls --subgraphs
hashes=$(echo "$out" | awk '{print $1}')
n=0
nested=0
for h in $hashes; do
	pn --db "$db" show "$h"
	[ "$status" -eq 0 ] || fail "show $h: $out"
	case "$out" in *"If("*"graph of 3 nodes"*) nested=$((nested + 1)) ;; esac
	n=$((n + 1))
done
[ "$n" -ge 4 ] || fail "only $n subgraphs"
[ "$nested" -ge 2 ] || fail "only $nested subgraphs hold the If with the nested If"
echo "nested ($variant): $n subgraphs ($nested with the nested If) decode and hash back"
done

# The same model with its attributes in the other order: the same subgraphs.
"$py" "$ROOT/tests/fixtures/nested_branches.py" "$TEST_TMP/else-first.onnx" || fail "fixture"
pn hash --subgraphs "$TEST_TMP/else-first.onnx"
a=$(printf '%s\n' "$out" | awk '{print $1}' | sort)
pn hash --subgraphs "$TEST_TMP/nested-then-first.onnx"
b=$(printf '%s\n' "$out" | awk '{print $1}' | sort)
[ -n "$a" ] || fail "no subgraph hashes"
[ "$a" = "$b" ] || fail "then_branch before else_branch changed the subgraph hashes"
echo "nested: the order of If's attributes in the file changes no hash"
