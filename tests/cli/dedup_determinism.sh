# Partition and dedup results depend only on the models: the store is
# byte-identical (mdb_dump) for 1 and 2 threads, for either order of the
# sources, when a source is added in a later run, and after partition or
# dedup is killed with SIGKILL and run again.
. "$ROOT/tests/cli/lib.sh"
need_corpus
s1="$CORPUS/models"
s2="$CORPUS/zoo"
dump() { mdb_dump -a "$1" > "$2" || fail "mdb_dump $1"; }
build() {   # db threads sources...
	db=$1 t=$2
	shift 2
	pn --db "$db" -j "$t" build "$@"
	[ "$status" -eq 0 ] || fail "build: $out"
}

build "$TEST_TMP/a" 1 "$s1" "$s2"
dump "$TEST_TMP/a" "$TEST_TMP/a.dump"
build "$TEST_TMP/b" 2 "$s2" "$s1"
dump "$TEST_TMP/b" "$TEST_TMP/b.dump"
cmp -s "$TEST_TMP/a.dump" "$TEST_TMP/b.dump" || fail "stores differ between -j1 and -j2 with the sources swapped"

# a source added later costs only its models and ends in the same store
build "$TEST_TMP/c" 2 "$s2"
build "$TEST_TMP/c" 2 "$s1" "$s2"
expect_contains "$out" "extract: " "second build ran"
dump "$TEST_TMP/c" "$TEST_TMP/c.dump"
cmp -s "$TEST_TMP/a.dump" "$TEST_TMP/c.dump" || fail "adding a source later gives another store"

# kill partition and dedup part-way, then finish; each try starts from a
# copy of the store as the stage before left it (extracted once, partitioned
# once), which is what a rerun of that stage would find
pn --db "$TEST_TMP/x" extract "$s1" "$s2"
[ "$status" -eq 0 ] || fail "extract: $out"
cp -r "$TEST_TMP/x" "$TEST_TMP/xp"
pn --db "$TEST_TMP/xp" partition
[ "$status" -eq 0 ] || fail "partition: $out"
killed=0
for stage in partition dedup; do
	for delay in 0.05 0.2 0.5; do
		rm -rf "$TEST_TMP/k"
		if [ "$stage" = dedup ]; then cp -r "$TEST_TMP/xp" "$TEST_TMP/k"; else cp -r "$TEST_TMP/x" "$TEST_TMP/k"; fi
		PASSNET_WRITE_BATCH=65536 "$PASSNET" --db "$TEST_TMP/k" -q -j 2 $stage >/dev/null 2>&1 &
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
