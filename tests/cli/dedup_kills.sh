# Partition, dedup and build killed with SIGKILL part-way, then run again,
# end in the store one uninterrupted build gives (mdb_dump).  Each try
# starts from a copy of the store as the stage before left it (extracted
# once, partitioned once), which is what a rerun of that stage would find.
# On the fixture corpus whatever the tier (not need_corpus): resuming is
# about the store's commits, not the models, and the 71-model corpus's
# builds made this the longest test of CI; dedup_determinism.sh checks the
# order and thread invariance on both corpora.  (Built with
# --no-weight-check, as dedup_determinism.sh is.)
. "$ROOT/tests/cli/lib.sh"
CORPUS=$(PYTHON="$PY" "$ROOT/tests/fixtures/corpus.sh") || fail "the fixture corpus could not be built"
s1="$CORPUS/models"
s2="$CORPUS/zoo"

pn --db "$TEST_TMP/a" -j 2 build --no-weight-check "$s1" "$s2"
[ "$status" -eq 0 ] || fail "build: $out"
dump "$TEST_TMP/a" "$TEST_TMP/a.dump"
pn --db "$TEST_TMP/x" extract --no-weight-check "$s1" "$s2"
[ "$status" -eq 0 ] || fail "extract: $out"
cp -r "$TEST_TMP/x" "$TEST_TMP/xp"
pn --db "$TEST_TMP/xp" partition
[ "$status" -eq 0 ] || fail "partition: $out"
killed=0
for stage in partition dedup build; do
	for delay in 0.05 0.2 0.5; do
		rm -rf "$TEST_TMP/k"
		if [ "$stage" = dedup ]; then cp -r "$TEST_TMP/xp" "$TEST_TMP/k"; else cp -r "$TEST_TMP/x" "$TEST_TMP/k"; fi
		args=
		[ "$stage" != build ] || args="--no-weight-check $s1 $s2"
		# shellcheck disable=SC2086
		PASSNET_WRITE_BATCH=65536 "$PASSNET" --db "$TEST_TMP/k" -q -j 2 $stage $args >/dev/null 2>&1 &
		pid=$!
		sleep "$delay"
		if kill -9 "$pid" 2>/dev/null; then
			killed=$((killed + 1))
			how="killed at ${delay}s"
		else
			how="ended before the kill at ${delay}s"
		fi
		wait "$pid" 2>/dev/null || true
		pn --db "$TEST_TMP/k" -j 2 partition
		pn --db "$TEST_TMP/k" -j 2 dedup
		[ "$status" -eq 0 ] || fail "resumed dedup: $out"
		dump "$TEST_TMP/k" "$TEST_TMP/k.dump"
		cmp -s "$TEST_TMP/a.dump" "$TEST_TMP/k.dump" || fail "store after killing $stage at ${delay}s differs"
		echo "$stage $how, resumed: same store"
	done
done
[ "$killed" -gt 0 ] || fail "no stage was still running when killed"
