# passnet merge: shard stores merged in any order or grouping give the store
# one machine builds from the same sources (mdb_dump -a byte-identical),
# merging again changes nothing, a killed merge run again converges, and a conflict is reported, counted, and
# settled the same way whatever the order.
. "$ROOT/tests/cli/lib.sh"
need_corpus
command -v mdb_dump >/dev/null || fail "no mdb_dump (make deps installs lmdb-utils)"

same() { cmp -s "$1.dump" "$2.dump" || fail "$3: mdb_dump of $1 and $2 differ"; }

# The 6 smallest model folders, two to a shard folder; the smallest is in
# A and in B too, so the merge must keep its least place as extract does.
cd "$TEST_TMP"
mkdir A B C
i=0
for f in $(find "$CORPUS/models" -name '*.onnx' -printf '%s %h\n' | sort -n | head -6 | cut -d' ' -f2); do
	case $((i / 2)) in 0) d=A ;; 1) d=B ;; *) d=C ;; esac
	cp -r "$f" "$d/"
	[ "$i" -eq 0 ] && cp -r "$f" B/
	i=$((i + 1))
done
[ "$i" -eq 6 ] || fail "the corpus has fewer than 6 models: $i"

build() {
	db=$1
	shift
	pn --db "$db" build --strategy sole,window "$@"
	[ "$status" -eq 0 ] || fail "build $db: $out"
}
merge() {
	db=$1
	shift
	pn --db "$db" merge "$@"
	[ "$status" -eq 0 ] || fail "merge into $db $*: $out"
	echo "$db <- $*: $out"
}

build ONE A B C
build SA A
build SB B
build SC C
merge M1 SA SB SC
merge M2 SC SA SB
merge M3 SA SB
merge M3 SC
for d in ONE M1 M2 M3; do dump "$d" "$d.dump"; done
same ONE M1 "merge SA SB SC against one build of A B C"
same ONE M2 "merge SC SA SB"
same ONE M3 "merge SA SB, then SC"
expect_contains "$out" "0 conflicts" "merging shards of other sources"

# Merging a store already in adds nothing.
merge M3 SB
expect_contains "$out" " 0 records added" "merging SB again"
expect_contains "$out" " 0 conflicts" "merging SB again"
dump M3 M3b.dump
same M3 M3b "merging SB into M3 again"

# Killed mid-way (small write batches: many commits), merged again: the
# same store as an uninterrupted merge.
# Shorter delays until two kills have landed before the merge's end (a
# fast machine finishes a merge of these stores in a fraction of a second).
killed=0
for delay in 0.5 0.2 0.1 0.05 0.02 0.01 0.005; do
	rm -rf K
	PASSNET_WRITE_BATCH=4096 "$PASSNET" --db K -q merge SA SB SC >/dev/null 2>&1 &
	pid=$!
	sleep "$delay"
	# a process that has ended but is not yet waited for still takes the
	# signal: ask /proc whether it is a zombie first
	state=$(awk '{ print $3 }' "/proc/$pid/stat" 2>/dev/null || echo Z)
	if [ "$state" != Z ] && kill -9 "$pid" 2>/dev/null; then killed=$((killed + 1)); fi
	wait "$pid" 2>/dev/null || true
	merge K SA SB SC
	dump K K.dump
	same ONE K "a merge killed at ${delay}s, then run again"
	[ "$killed" -ge 2 ] && break
done
[ "$killed" -gt 0 ] || fail "no merge was still going when killed: the test proved nothing"

# --json: the totals and the tables.
pn --db M4 --json merge SA SB SC
[ "$status" -eq 0 ] || fail "merge --json: $out"
expect_contains "$out" '"stage":"merge","inputs":3' "merge --json"
expect_contains "$out" '"conflicts":0' "merge --json"
dump M4 M4.dump
same ONE M4 "merge --json"

# A conflict: C built without shape variants holds the same models (the
# same keys) with other records.  Reported one line per key, counted, the
# least bytes kept whatever the order; --strict fails on it.
build SC0 --variants 0 C
pn --db X1 merge SC SC0
[ "$status" -eq 0 ] || fail "merge with conflicts must still exit 0: $out"
expect_contains "$out" "merge: SC0: models " "the conflict line names the input and table"
expect_contains "$out" "field variant_notes differs" "the conflict line says what differs"
n=$(printf '%s\n' "$out" | grep -c 'merge: SC0: models ') || true
[ "$n" -ge 1 ] || fail "no conflict line: $out"
expect_contains "$out" " $n conflicts" "the summary counts the conflicts"
pn --db X2 merge SC0 SC
[ "$status" -eq 0 ] || fail "merge SC0 SC: $out"
expect_contains "$out" " $n conflicts" "the other order has as many conflicts"
dump X1 X1.dump
dump X2 X2.dump
same X1 X2 "conflicts settled in either order"
pn --db X3 merge --strict SC SC0
[ "$status" -eq 1 ] || fail "merge --strict with conflicts: exit $status, want 1: $out"
dump X3 X3.dump
same X1 X3 "merge --strict still merges"

# An input that is not a store: one line naming it, the rest merged, exit 1.
mkdir notastore
echo junk >notastore/data.mdb
pn --db M5 merge SA notastore SB SC
[ "$status" -eq 1 ] || fail "merge with an unreadable input: exit $status, want 1: $out"
expect_contains "$out" "notastore" "the unreadable input is named"
dump M5 M5.dump
same ONE M5 "the readable inputs are merged past an unreadable one"
pn --db M5 merge M5
[ "$status" -eq 1 ] || fail "merging a store into itself: exit $status: $out"
echo "merge: shards equal one build in every order; conflicts reported ($n) and order-free"
