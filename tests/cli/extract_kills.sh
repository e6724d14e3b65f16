# An extract killed with SIGKILL in the middle and run again ends in the
# store an uninterrupted run gives (mdb_dump).  On the fixture corpus and
# the ONNX backend tests whatever the tier (not need_corpus): resuming is
# about the store's commits, not the models; extract_determinism.sh checks
# the order and thread invariance on both corpora.
. "$ROOT/tests/cli/lib.sh"
CORPUS=$(PYTHON="$PY" "$ROOT/tests/fixtures/corpus.sh") || fail "the fixture corpus could not be built"
s1="$TESTDATA/node"
s2="$CORPUS"
[ -d "$s1" ] || fail "no ONNX backend tests at $TESTDATA (make deps installs libonnx-testdata)"

# Kill a run at several moments; each resumed run must end where an
# uninterrupted one ends.  Small write batches make the killed runs leave
# many commits behind (a batch can end between a model and its place).
pn --db "$TEST_TMP/d" -j 2 extract "$s1" "$s2"
[ "$status" -eq 0 ] || fail "extract: $out"
dump "$TEST_TMP/d" "$TEST_TMP/d.dump"
killed=0
for delay in 0.1 0.25 0.4 0.6; do
	rm -rf "$TEST_TMP/c"
	PASSNET_WRITE_BATCH=65536 "$PASSNET" --db "$TEST_TMP/c" -q -j 2 extract "$s1" "$s2" >/dev/null 2>&1 &
	pid=$!
	sleep "$delay"
	if kill -9 "$pid" 2>/dev/null; then killed=$((killed + 1)); fi
	wait "$pid" 2>/dev/null || true
	pn --db "$TEST_TMP/c" -j 2 extract "$s1" "$s2"
	[ "$status" -eq 0 ] || fail "resumed extract: $out"
	echo "killed at ${delay}s, resumed: $out"
	dump "$TEST_TMP/c" "$TEST_TMP/c.dump"
	cmp "$TEST_TMP/d.dump" "$TEST_TMP/c.dump" || fail "store after a kill at ${delay}s differs"
done
[ "$killed" -gt 0 ] || fail "no run was still going when killed: the test proved nothing"
echo "killed $killed runs mid-way; all resumed to the same store"
