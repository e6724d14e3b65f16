# Control flow nested two deep: an If inside an If branch reading a value of
# the main graph through both scopes and one computed in the outer branch,
# and a Constant in a branch too large to keep by value.  Every subgraph cut
# from it decodes back into a graph that hashes to its key (doctor --deep),
# and `show` prints each (it decodes the canonical bytes too).
. "$ROOT/tests/cli/lib.sh"
py=/usr/bin/python3
for size in large small; do
m="$TEST_TMP/nested-$size.onnx"
"$py" "$ROOT/tests/fixtures/nested_branches.py" "$m" $size || fail "fixture"
db="$TEST_TMP/db-$size"
pn --db "$db" build "$m"
[ "$status" -eq 0 ] || fail "build: $out"
pn --db "$db" doctor --deep
echo "$out"
[ "$status" -eq 0 ] || fail "doctor --deep ($size constant): $out"
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
echo "nested ($size constant): $n subgraphs ($nested with the nested If) decode and hash back"
done
