# dedup's shortcuts change its speed, never its store: the exact form cache
# (PASSNET_FORM_CACHE=0 turns it off) and the plan streamed in chunks
# (PASSNET_DEDUP_CHUNK=1: one model's key bucket at a time) give the same
# mdb_dump of every table as dedup without them, on 1 and 2 threads, with
# and without shape variants; and the cache is really used (it hits).
# (Built with --no-weight-check: what this tests never reads the weight
# check, weights_scale.sh shows it changes no subgraph, and its runs are
# most of extract's time on this corpus.)
. "$ROOT/tests/cli/lib.sh"
need_corpus

for variants in 0 9; do
	base="$TEST_TMP/base$variants"
	pn --db "$base" extract --no-weight-check --variants "$variants" "$CORPUS/models" "$CORPUS/zoo"
	[ "$status" -eq 0 ] || fail "extract: $out"
	pn --db "$base" partition
	[ "$status" -eq 0 ] || fail "partition: $out"
	run() {   # name threads env...: dedup a copy of the partitioned store
		name=$1 t=$2
		shift 2
		rm -rf "$TEST_TMP/$name"
		cp -r "$base" "$TEST_TMP/$name"
		set +e
		out=$(env "$@" PASSNET_DEDUP_STATS=1 "$PASSNET" --db "$TEST_TMP/$name" -j "$t" dedup 2>&1)
		status=$?
		set -e
		[ "$status" -eq 0 ] || fail "dedup ($name): $out"
		dump "$TEST_TMP/$name" "$TEST_TMP/$name.dump"
	}
	run off$variants 1 PASSNET_FORM_CACHE=0 PASSNET_DEDUP_CHUNK=100000
	expect_contains "$out" "form cache: 0 lookups" "cache off"
	expect_contains "$out" "new subgraphs" "dedup ran"
	run on$variants 2 PASSNET_FORM_CACHE=1
	# the first form cache line is the stage's pass over the table (a second
	# one is the keep of corpus blocks, dedup/blocks.h)
	hits=$(echo "$out" | sed -n 's/.*lookups, \([0-9]*\) hits.*/\1/p' | head -n 1)
	[ "${hits:-0}" -gt 0 ] || fail "the form cache never hit (variants $variants): $out"
	cmp -s "$TEST_TMP/off$variants.dump" "$TEST_TMP/on$variants.dump" ||
		fail "stores differ with the form cache on and off (variants $variants)"
	run chunked$variants 1 PASSNET_FORM_CACHE=1 PASSNET_DEDUP_CHUNK=1
	cmp -s "$TEST_TMP/off$variants.dump" "$TEST_TMP/chunked$variants.dump" ||
		fail "stores differ when the plan is made one model bucket at a time (variants $variants)"
	run chunked_j2_$variants 2 PASSNET_FORM_CACHE=0 PASSNET_DEDUP_CHUNK=3
	cmp -s "$TEST_TMP/off$variants.dump" "$TEST_TMP/chunked_j2_$variants.dump" ||
		fail "stores differ in chunks of 3 models on 2 threads (variants $variants)"
done
echo "dedup_shortcuts: ok"
