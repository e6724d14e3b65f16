# Partition and dedup results depend only on the models: the store is
# byte-identical (mdb_dump) for 1 and 2 threads, for either order of the
# sources, and when a source is added in a later run (dedup_kills.sh: after
# partition or dedup is killed with SIGKILL and run again).  `build` runs the two as one
# streamed pass (dedup/stream.h): its store equals the two stages run apart,
# and a build after a partition run of its own hashes what that left.
# (Built with --no-weight-check: what this tests never reads the weight
# check, weights_scale.sh shows it changes no subgraph, and its runs are
# most of extract's time on this corpus.)
. "$ROOT/tests/cli/lib.sh"
need_corpus
s1="$CORPUS/models"
s2="$CORPUS/zoo"
build() {   # db threads sources...
	db=$1 t=$2
	shift 2
	pn --db "$db" -j "$t" build --no-weight-check "$@"
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

# the stages one by one
pn --db "$TEST_TMP/x" extract --no-weight-check "$s1" "$s2"
[ "$status" -eq 0 ] || fail "extract: $out"
cp -r "$TEST_TMP/x" "$TEST_TMP/xp"
pn --db "$TEST_TMP/xp" partition
[ "$status" -eq 0 ] || fail "partition: $out"
# partition alone marks the candidates table as holding unhashed candidates;
# a build then finds nothing to cut and hashes them (the mark gone after)
mdb_dump -p -s meta "$TEST_TMP/xp" | grep -q candidates_unhashed || fail "partition left no mark in meta"
cp -r "$TEST_TMP/xp" "$TEST_TMP/xb"
pn --db "$TEST_TMP/xb" -j 2 build --no-weight-check "$s1" "$s2"
[ "$status" -eq 0 ] || fail "build after partition: $out"
expect_contains "$out" "partition: 0 models" "the build after partition cut nothing"
dump "$TEST_TMP/xb" "$TEST_TMP/xb.dump"
cmp -s "$TEST_TMP/a.dump" "$TEST_TMP/xb.dump" || fail "build after a partition run differs from one build"
# and the two stages run apart, with strategies added in a second run
cp -r "$TEST_TMP/x" "$TEST_TMP/xs"
pn --db "$TEST_TMP/xs" -j 2 partition --strategy sole,fusion
pn --db "$TEST_TMP/xs" -j 2 dedup
pn --db "$TEST_TMP/xs" -j 1 build --no-weight-check --strategy window,anchor,typical "$s1"
[ "$status" -eq 0 ] || fail "build of the other strategies: $out"
dump "$TEST_TMP/xs" "$TEST_TMP/xs.dump"
cmp -s "$TEST_TMP/a.dump" "$TEST_TMP/xs.dump" || fail "stages apart, then a build of the other strategies, differ from one build"
