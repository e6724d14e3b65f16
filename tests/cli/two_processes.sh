# Two processes on one store (store/writer_lock.h).
#  1. A second writer waits: while one `passnet build` writes the store, a
#     second build of the same sources says which process is writing,
#     waits for it to end, and then ends itself with status 0 (builds take
#     turns stage by stage: each stage opens the writer anew).
#  2. Readers do not wait and see a consistent store: `doctor` (read-only)
#     run again and again during the write finds no problem each time.
#  3. The store the two builds leave is the one a single build gives
#     (mdb_dump).
#  4. A writer killed with SIGKILL leaves no lock behind: the next writer
#     starts at once.
. "$ROOT/tests/cli/lib.sh"
need_corpus
# The smallest graphs, 8 of them, else (on a machine where the first build
# ends before the second reaches the store) 16, then all of them: until the
# two builds overlap.
all_models=$(ls -Sr "$CORPUS"/models/*/model.onnx | xargs -n1 dirname)
for level in 8 16 all; do
	if [ "$level" = all ]; then srcs=$all_models; else srcs=$(echo "$all_models" | head -n "$level"); fi
	db="$TEST_TMP/db$level"
	# 1 and 2
	"$PASSNET" --db "$db" build $srcs >"$TEST_TMP/a.out" 2>&1 &
	a=$!
	# the first writer holds the lock once the store exists
	n=0
	while [ ! -e "$db/writer.lock" ] && [ "$n" -lt 600 ]; do sleep 0.05; n=$((n + 1)); done
	[ -e "$db/writer.lock" ] || fail "the first build never opened its writer"
	"$PASSNET" --db "$db" build $srcs >"$TEST_TMP/b.out" 2>&1 &
	b=$!
	reads=0
	while kill -0 "$a" 2>/dev/null; do
		pn --db "$db" doctor
		if kill -0 "$a" 2>/dev/null; then
			[ "$status" -eq 0 ] || fail "doctor during a write found problems: $out"
			reads=$((reads + 1))
		fi
		sleep 0.2
	done
	wait "$a" || fail "the first build failed: $(cat "$TEST_TMP/a.out")"
	wait "$b" || fail "the second build failed: $(cat "$TEST_TMP/b.out")"
	# each stage opens the writer anew, so between two stages of one build
	# the other may take its turn: either may be the one that waits
	wb=$(grep -c "is being written by passnet process $a; waiting for it to end" "$TEST_TMP/b.out" || true)
	wa=$(grep -c "is being written by passnet process $b; waiting for it to end" "$TEST_TMP/a.out" || true)
	[ $((wa + wb)) -ge 1 ] && break
	[ "$level" != all ] || fail "neither writer said it waits for the other: $(cat "$TEST_TMP/a.out" "$TEST_TMP/b.out")"
done
echo "1. the builds ($(echo "$srcs" | wc -l) models) took turns: the second waited $wb times for process $a, the first $wa times for $b"
echo "2. $reads doctor runs during the write, each clean"

# 3
pn --db "$TEST_TMP/one" build $srcs
[ "$status" -eq 0 ] || fail "single build: $out"
dump "$db" "$TEST_TMP/two.dump"
dump "$TEST_TMP/one" "$TEST_TMP/one.dump"
cmp -s "$TEST_TMP/two.dump" "$TEST_TMP/one.dump" || fail "two builds at once leave another store than one"
echo "3. the store of two builds at once is that of one"

# 4
# killed, it cannot be checked for leaks (see kill_points.sh)
ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0" UBSAN_OPTIONS="${UBSAN_OPTIONS:-}:detect_leaks=0" \
	LSAN_OPTIONS="${LSAN_OPTIONS:-}:detect_leaks=0" "$PASSNET" --db "$TEST_TMP/k" build $srcs >/dev/null 2>&1 &
k=$!
n=0
while [ ! -e "$TEST_TMP/k/writer.lock" ] && [ "$n" -lt 600 ]; do sleep 0.05; n=$((n + 1)); done
kill -9 "$k" 2>/dev/null || fail "the build to kill ended first"
wait "$k" 2>/dev/null || true
pn --db "$TEST_TMP/k" build $srcs
[ "$status" -eq 0 ] || fail "build after a killed writer: $out"
case "$out" in *"waiting for it to end"*) fail "a killed writer's lock was still held: $out" ;; esac
echo "4. after a SIGKILLed writer the next one starts at once"
echo "two_processes: ok"
