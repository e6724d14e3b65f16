# The store depends only on the sources: mdb_dump is byte-identical for 1
# and 2 threads, for any order of the PATH arguments and for any memory
# budget of the runs (extract/run_gate.h), the weight check's runs included (extract_kills.sh: after a run killed with SIGKILL in the
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

# a budget of 1 MiB: most runs wait for the other thread's, and -v says so
# (the backend tests alone: under it the corpus's models would run one at a
# time, minutes on the test corpus)
pn --db "$TEST_TMP/c1" -j 1 extract "$s1"
[ "$status" -eq 0 ] || fail "extract -j1 of the backend tests: $out"
PASSNET_RUN_MEMORY_MB=1 pn --db "$TEST_TMP/c2" -v -j 2 extract "$s1"
[ "$status" -eq 0 ] || fail "extract -j2 with a 1 MiB run budget: $out"
case "$out" in *"model runs, 0 waited"*) fail "no run waited under a 1 MiB budget: $(echo "$out" | grep 'model runs')" ;;
	*"waited for memory (budget 1 MiB"*) ;; *) fail "-v does not report the run gate: $out" ;; esac
dump "$TEST_TMP/c1" "$TEST_TMP/c1.dump"
dump "$TEST_TMP/c2" "$TEST_TMP/c2.dump"
cmp "$TEST_TMP/c1.dump" "$TEST_TMP/c2.dump" || fail "store differs with a 1 MiB run budget"

