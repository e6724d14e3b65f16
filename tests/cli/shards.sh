#!/bin/sh
# shards.sh - `--shard K/N` and `passnet merge` give what one machine gives.
#
#  1. build --shard K/3 of the same sources (a folder of models and the
#     corpus archives, shape variants on) into three stores, merged, equals
#     one `passnet build` of them (mdb_dump -a, every table); in any order
#     and any grouping of the merges, and merging a shard again adds nothing.
#  2. The three shards share no model file, and together they have them all.
#  3. partition --shard and dedup --shard K/3 on copies of one extracted
#     store, merged, equal one partition + dedup.
#  4. exec --ranges-only --shard K/3 on copies of one built store, merged,
#     equal one ranges phase (the ranges join); exec --shard K/3 on copies
#     of one store with its ranges, merged, equal one exec, times aside
#     (profiles compared by key, every other table byte for byte).
#  5. --shard is refused when malformed, before any store is touched.
. "$ROOT/tests/cli/lib.sh"
need_corpus

# the profiles table's values hold measured times: keep its keys only
dump_no_times() {
	mdb_dump -a "$1" | awk '/^database=/ { p = ($0 == "database=profiles"); n = 0 }
		p && /^ / { n++; if (n % 2 == 0) next } { print }' > "$2" || fail "mdb_dump $1"
}
same() {
	cmp -s "$1" "$2" || { diff "$1" "$2" | head -20 >&2; fail "$3"; }
}

# The sources: the 8 smallest model folders (copied, so that the test owns
# them) and the two smallest archives, as three sources.
src="$TEST_TMP/src"
mkdir -p "$src/models" "$src/zoo"
for d in $(du -s "$CORPUS"/models/* | sort -n | head -n 8 | awk '{print $2}'); do
	cp -r "$d" "$src/models/"
done
for a in $(ls -S -r "$CORPUS"/zoo/* | head -n 2); do cp "$a" "$src/zoo/"; done
# Named relative to TEST_TMP: a source's name is the path it is given, and
# the shard of a file follows from its place key (source and path), so an
# absolute path under a random TEST_TMP dealt the ten files anew on every
# run and now and then left a shard empty.  Relative, the deal is fixed.
cd "$TEST_TMP"
set -- src/models $(ls src/zoo/* | sort)
build_args="--variants 2 --strategy fusion,window,sole"

# --- 1, 2: build shards ------------------------------------------------------
pn --db "$TEST_TMP/one" build $build_args "$@"
[ "$status" -eq 0 ] || fail "one build: $out"
dump "$TEST_TMP/one" "$TEST_TMP/one.dump"
total=0
for k in 0 1 2; do
	pn --db "$TEST_TMP/s$k" --json extract --variants 2 --shard "$k/3" "$@"
	[ "$status" -eq 0 ] || fail "extract --shard $k/3: $out"
	files=$(echo "$out" | sed -n 's/.*"files":\([0-9]*\).*/\1/p' | tail -n 1)
	total=$((total + files))
	pn --db "$TEST_TMP/s$k" build $build_args --shard "$k/3" "$@"
	[ "$status" -eq 0 ] || fail "build --shard $k/3: $out"
done
pn --db "$TEST_TMP/one" --json extract --variants 2 "$@"
all=$(echo "$out" | sed -n 's/.*"files":\([0-9]*\).*/\1/p' | tail -n 1)
expect_eq "$total" "$all" "model files over the three shards"
# no model place in two shards
for k in 0 1 2; do
	mdb_dump -s model_paths "$TEST_TMP/s$k" | awk '/^ / { n++; if (n % 2 == 1) print }'
done | sort | uniq -d > "$TEST_TMP/twice"
[ ! -s "$TEST_TMP/twice" ] || fail "a model place is in two shards: $(head -n 1 "$TEST_TMP/twice")"
for k in 0 1 2; do
	n=$(mdb_dump -s model_paths "$TEST_TMP/s$k" | awk '/^ / { n++ } END { print n / 2 }')
	[ "$n" -gt 0 ] || fail "shard $k/3 holds no model file (too few files for the test?)"
done

merge() {
	out_db=$1
	shift
	pn --db "$out_db" merge "$@"
	[ "$status" -eq 0 ] || fail "merge into $out_db: $out"
}
merge "$TEST_TMP/m1" "$TEST_TMP/s0" "$TEST_TMP/s1" "$TEST_TMP/s2"
dump "$TEST_TMP/m1" "$TEST_TMP/m1.dump"
same "$TEST_TMP/one.dump" "$TEST_TMP/m1.dump" "merged build shards differ from one build"
merge "$TEST_TMP/m2" "$TEST_TMP/s2" "$TEST_TMP/s0" "$TEST_TMP/s1"
merge "$TEST_TMP/m3" "$TEST_TMP/s1"
merge "$TEST_TMP/m3" "$TEST_TMP/s2" "$TEST_TMP/s0"
merge "$TEST_TMP/m3" "$TEST_TMP/s1"
for m in m2 m3; do
	dump "$TEST_TMP/$m" "$TEST_TMP/$m.dump"
	same "$TEST_TMP/one.dump" "$TEST_TMP/$m.dump" "$m: another order or grouping of the merges"
done
echo "build: 3 shards of $all model files merge into the one-process store"

# --- 3: partition and dedup shards on one extracted store --------------------
pn --db "$TEST_TMP/x" extract --variants 2 "$@"
[ "$status" -eq 0 ] || fail "extract: $out"
for k in 0 1 2; do
	cp -r "$TEST_TMP/x" "$TEST_TMP/p$k"
	pn --db "$TEST_TMP/p$k" partition --strategy fusion,window,sole --shard "$k/3"
	[ "$status" -eq 0 ] || fail "partition --shard $k/3: $out"
	pn --db "$TEST_TMP/p$k" dedup --shard "$k/3"
	[ "$status" -eq 0 ] || fail "dedup --shard $k/3: $out"
done
merge "$TEST_TMP/pm" "$TEST_TMP/p2" "$TEST_TMP/p1" "$TEST_TMP/p0"
dump "$TEST_TMP/pm" "$TEST_TMP/pm.dump"
same "$TEST_TMP/one.dump" "$TEST_TMP/pm.dump" "merged partition/dedup shards differ from one build"
echo "partition, dedup: 3 shards of one extracted store merge into the one-process store"

# --- 4: ranges shards, then exec shards ---------------------------------------
for k in 0 1 2; do
	cp -r "$TEST_TMP/one" "$TEST_TMP/r$k"
	pn --db "$TEST_TMP/r$k" exec --ranges-only --shard "$k/3"
	[ "$status" -eq 0 ] || fail "exec --ranges-only --shard $k/3: $out"
	expect_contains "$out" "models run" "exec --ranges-only --shard $k/3 ran models"
done
pn --db "$TEST_TMP/rm" --json merge "$TEST_TMP/r1" "$TEST_TMP/r2" "$TEST_TMP/r0"
[ "$status" -eq 0 ] || fail "merge of the ranges shards: $out"
# records of one subgraph from two shards that differ, joined by the rule
# (the fixture corpus needs the join for some; models that give a shared
# subgraph the same ranges, as the small ones of the 71-model test corpus do, need
# none, and test_merge's case 10 checks the join itself)
joined=$(echo "$out" | sed -n 's/.*"ranges":{"added":[0-9]*,"equal":[0-9]*,"resolved":\([0-9]*\).*/\1/p')
[ -n "$joined" ] || fail "no ranges counts in merge --json: $out"
[ -n "${PASSNET_CORPUS:-}" ] || [ "$joined" -gt 0 ] || fail "no ranges record of the fixture corpus needed the join: $out"
merge "$TEST_TMP/rm2" "$TEST_TMP/r0"
merge "$TEST_TMP/rm2" "$TEST_TMP/r2" "$TEST_TMP/r1"
cp -r "$TEST_TMP/one" "$TEST_TMP/rone"
pn --db "$TEST_TMP/rone" exec --ranges-only
[ "$status" -eq 0 ] || fail "exec --ranges-only: $out"
dump "$TEST_TMP/rone" "$TEST_TMP/rone.dump"
grep -q '^database=ranges' "$TEST_TMP/rone.dump" || fail "the ranges phase recorded nothing"
# subgraphs whose ranges came from two shards (on the fixture corpus some
# do, and need the join; test_merge's case 10 checks the join itself)
for k in 0 1 2; do
	mdb_dump -s ranges "$TEST_TMP/r$k" | sed '1,/^HEADER=END/d' | awk 'NR % 2 == 1 && length($1) == 32'
done | sort | uniq -d > "$TEST_TMP/shared_ranges"
[ -n "${PASSNET_CORPUS:-}" ] || [ -s "$TEST_TMP/shared_ranges" ] ||
	fail "no subgraph of the fixture corpus got ranges in two shards: the join went untested"
for m in rm rm2; do
	dump "$TEST_TMP/$m" "$TEST_TMP/$m.dump"
	same "$TEST_TMP/rone.dump" "$TEST_TMP/$m.dump" "$m: merged ranges shards differ from one ranges phase"
done
echo "ranges: 3 shards of the models join into the one-process ranges ($(wc -l < "$TEST_TMP/shared_ranges") subgraphs ranged in two shards, $joined records joined)"

# a few dozen subgraphs (exec --plan lists what it would measure), on the
# calibration and ranges recorded first (the same in every copy)
pn --db "$TEST_TMP/one" exec --only /dev/null
[ "$status" -eq 0 ] || fail "exec (calibration and ranges): $out"
"$PASSNET" --db "$TEST_TMP/one" exec --plan --strategy sole > "$TEST_TMP/plan" 2>/dev/null ||
	fail "exec --plan"
awk 'NR % 20 == 1' "$TEST_TMP/plan" | head -n 40 > "$TEST_TMP/some"
[ "$(wc -l < "$TEST_TMP/some")" -ge 10 ] || fail "exec --plan listed too few subgraphs"
exec_args="--only $TEST_TMP/some --warmup 0 --trials 1 --repeats 0"
for k in 0 1 2; do
	cp -r "$TEST_TMP/one" "$TEST_TMP/e$k"
	pn --db "$TEST_TMP/e$k" exec $exec_args --shard "$k/3"
	[ "$status" -eq 0 ] || fail "exec --shard $k/3: $out"
done
cp -r "$TEST_TMP/one" "$TEST_TMP/eone"
pn --db "$TEST_TMP/eone" exec $exec_args
[ "$status" -eq 0 ] || fail "one exec: $out"
merge "$TEST_TMP/em" "$TEST_TMP/e1" "$TEST_TMP/e0" "$TEST_TMP/e2"
dump_no_times "$TEST_TMP/eone" "$TEST_TMP/eone.dump"
dump_no_times "$TEST_TMP/em" "$TEST_TMP/em.dump"
grep -q '^database=profiles' "$TEST_TMP/em.dump" || fail "the merged exec shards hold no profiles"
same "$TEST_TMP/eone.dump" "$TEST_TMP/em.dump" "merged exec shards differ from one exec (times aside)"
echo "exec: $(wc -l < "$TEST_TMP/some") subgraphs over 3 shards merge into the one-process profiles"

# --- 5: bad --shard ----------------------------------------------------------------
for bad in 3/3 1 a/2 1/0 -1/2; do
	pn --db "$TEST_TMP/never" build --shard "$bad" "$src/models"
	[ "$status" -eq 2 ] || fail "build --shard $bad: expected a usage error (2), got $status: $out"
	expect_contains "$out" "shard" "build --shard $bad names the option"
done
[ ! -e "$TEST_TMP/never" ] || fail "a bad --shard created the store"
echo "ok"
