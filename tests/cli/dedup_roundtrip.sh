# A subgraph's canonical bytes are the subgraph: decoding them gives a graph
# that hashes back to the same key, for every subgraph of ../shared/corpus
# and the ONNX backend tests (`passnet doctor --deep` checks it, with every
# other invariant of the store).
. "$ROOT/tests/cli/lib.sh"
need_shared
db="$TEST_TMP/db"
pn --db "$db" build "$SHARED" "$TESTDATA"
[ "$status" -eq 0 ] || fail "build: $out"
echo "$out"
pn --db "$db" doctor --deep
echo "$out" | tail -n 3
[ "$status" -eq 0 ] || fail "doctor --deep found problems"
n=$(echo "$out" | sed -n 's/^doctor: \([0-9]*\) records checked.*/\1/p')
[ "${n:-0}" -ge 100000 ] || fail "only ${n:-0} records checked"
pn --db "$db" --json stats
expect_contains "$out" '"subgraphs":' "stats reports subgraphs"
