# `passnet exec` is incremental and survives SIGKILL: a killed run keeps what
# it committed, the next run measures only what is missing, and a run with
# nothing left measures nothing.  Profiles hold the fields the report and the
# export read.
. "$ROOT/tests/cli/lib.sh"
need_corpus
db="$TEST_TMP/db"
# without shape variants: resuming is the point, not their extra work
pn --db "$db" build --variants 0 "$CORPUS/models/squeezenet1_1" "$CORPUS/models/gpt2_tiny"
[ "$status" -eq 0 ] || fail "build: $out"
pn --db "$db" --json stats
total=$(echo "$out" | sed 's/.*"subgraphs":\([0-9]*\).*/\1/')
[ "$total" -gt 50 ] || fail "only $total subgraphs"

pn --db "$db" calibrate
[ "$status" -eq 0 ] || fail "calibrate: $out"
# the full protocol's many runs per subgraph: on the fixture corpus the
# adaptive one measured every subgraph in 0.1 s, within one poll
"$PASSNET" --db "$db" -q exec --protocol full --warmup 50 --trials 200 >/dev/null 2>&1 &
pid=$!
# SIGKILL as soon as the store (read while exec writes) holds a profile:
# part-way on a corpus of any size, with no guess at how long exec takes
polls=0
while kill -0 "$pid" 2>/dev/null; do
	n=$("$PASSNET" --db "$db" --json stats 2>/dev/null | sed -n 's/.*"profiled":\([0-9]*\).*/\1/p')
	[ "${n:-0}" -eq 0 ] || break
	polls=$((polls + 1))
	[ "$polls" -le 3000 ] || { kill -9 "$pid"; fail "exec committed no profile in 300 s"; }
	sleep 0.1
done
kill -9 "$pid" 2>/dev/null || fail "exec ended before it was killed: the kill tested nothing"
wait "$pid" 2>/dev/null || true
pn --db "$db" --json stats
before=$(echo "$out" | sed 's/.*"profiled":\([0-9]*\).*/\1/')
echo "killed exec once it had committed profiles: $before of $total"
[ "$before" -gt 0 ] || fail "the killed run left no profile"
[ "$before" -lt "$total" ] || fail "the killed run had measured everything"

pn --db "$db" --json exec --warmup 1 --trials 3
[ "$status" -eq 0 ] || fail "resumed exec: $out"
did=$(echo "$out" | sed 's/.*"profiled":\([0-9]*\).*/\1/')
[ "$did" -eq $((total - before)) ] || fail "the resumed run measured $did, expected $((total - before))"
pn --db "$db" --json stats
after=$(echo "$out" | sed 's/.*"profiled":\([0-9]*\).*/\1/')
[ "$after" -eq "$total" ] || fail "$after of $total subgraphs have a profile"
expect_contains "$out" '"fusible":' "flag counts in stats"

pn --db "$db" --json exec
did=$(echo "$out" | sed 's/.*"profiled":\([0-9]*\).*/\1/')
[ "$did" -eq 0 ] || fail "a run with nothing new measured $did subgraphs"
pn --db "$db" doctor
[ "$status" -eq 0 ] || fail "doctor: $out"

# --redo F measures again exactly the subgraphs whose profile has flag F
# (fusible depends on shapes only, so the set is known beforehand), and
# leaves every subgraph profiled.
fusible=$("$PASSNET" --db "$db" --json ls --subgraphs --flag fusible | wc -l)
[ "$fusible" -gt 0 ] || fail "no fusible subgraph to measure again"
pn --db "$db" --json exec --warmup 0 --trials 1 --redo fusible
[ "$status" -eq 0 ] || fail "exec --redo fusible: $out"
did=$(echo "$out" | sed 's/.*"profiled":\([0-9]*\).*/\1/')
[ "$did" -eq "$fusible" ] || fail "--redo fusible measured $did subgraphs, expected $fusible"
pn --db "$db" --json stats
after=$(echo "$out" | sed 's/.*"profiled":\([0-9]*\).*/\1/')
[ "$after" -eq "$total" ] || fail "after --redo, $after of $total subgraphs have a profile"
pn --db "$db" exec --redo no-such-flag
[ "$status" -ne 0 ] || fail "--redo with an unknown flag was accepted"
expect_contains "$out" "unknown flag" "--redo error"
