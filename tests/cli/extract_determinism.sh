# The store depends only on the sources: mdb_dump is byte-identical for 1
# and 2 threads and for any order of the PATH arguments, the weight check's
# runs included (extract_kills.sh: after a run killed with SIGKILL in the
# middle is resumed).
. "$ROOT/tests/cli/lib.sh"
need_corpus
s1="$TESTDATA/node"
s2="$CORPUS"
[ -d "$s1" ] || fail "no ONNX backend tests at $TESTDATA (make deps installs libonnx-testdata)"


pn --db "$TEST_TMP/a" -j 1 extract "$s1" "$s2"
[ "$status" -eq 0 ] || fail "extract -j1: $out"
dump "$TEST_TMP/a" "$TEST_TMP/a.dump"

pn --db "$TEST_TMP/b" -j 2 extract "$s2" "$s1"
[ "$status" -eq 0 ] || fail "extract -j2: $out"
dump "$TEST_TMP/b" "$TEST_TMP/b.dump"
cmp "$TEST_TMP/a.dump" "$TEST_TMP/b.dump" || fail "store differs between -j1 and -j2 with the sources swapped"

