# The store depends only on the sources: mdb_dump is byte-identical for 1
# and 2 threads, for any order of the PATH arguments, and after a run killed
# with SIGKILL in the middle is resumed.
. "$ROOT/tests/cli/lib.sh"
need_corpus
s1="$TESTDATA/node"
s2="$CORPUS"
[ -d "$s1" ] || fail "no ONNX backend tests at $TESTDATA (make deps installs libonnx-testdata)"

dump() { mdb_dump -a "$1" > "$2" || fail "mdb_dump $1"; }

pn --db "$TEST_TMP/a" -j 1 extract "$s1" "$s2"
[ "$status" -eq 0 ] || fail "extract -j1: $out"
dump "$TEST_TMP/a" "$TEST_TMP/a.dump"

pn --db "$TEST_TMP/b" -j 2 extract "$s2" "$s1"
[ "$status" -eq 0 ] || fail "extract -j2: $out"
dump "$TEST_TMP/b" "$TEST_TMP/b.dump"
cmp "$TEST_TMP/a.dump" "$TEST_TMP/b.dump" || fail "store differs between -j1 and -j2 with the sources swapped"

# Kill a run at several moments; each resumed run must end where an
# uninterrupted one ends.  Small write batches make the killed runs leave
# many commits behind (a batch can end between a model and its place).
# These runs skip the weight check (--no-weight-check: its runs happen
# before a model is committed, so they change nothing of what a kill can
# interrupt, and they are most of extract's time here); the reference is
# an uninterrupted run without it.
pn --db "$TEST_TMP/d" -j 2 extract --no-weight-check "$s1" "$s2"
[ "$status" -eq 0 ] || fail "extract --no-weight-check: $out"
dump "$TEST_TMP/d" "$TEST_TMP/d.dump"
killed=0
for delay in 0.1 0.25 0.4 0.6; do
	rm -rf "$TEST_TMP/c"
	PASSNET_WRITE_BATCH=65536 "$PASSNET" --db "$TEST_TMP/c" -q -j 2 extract --no-weight-check "$s1" "$s2" >/dev/null 2>&1 &
	pid=$!
	sleep "$delay"
	if kill -9 "$pid" 2>/dev/null; then killed=$((killed + 1)); fi
	wait "$pid" 2>/dev/null || true
	pn --db "$TEST_TMP/c" -j 2 extract --no-weight-check "$s1" "$s2"
	[ "$status" -eq 0 ] || fail "resumed extract: $out"
	echo "killed at ${delay}s, resumed: $out"
	dump "$TEST_TMP/c" "$TEST_TMP/c.dump"
	cmp "$TEST_TMP/d.dump" "$TEST_TMP/c.dump" || fail "store after a kill at ${delay}s differs"
done
[ "$killed" -gt 0 ] || fail "no run was still going when killed: the test proved nothing"
echo "killed $killed runs mid-way; all resumed to the same store"
