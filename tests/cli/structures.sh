# Models of one structure share their candidates and occurrences
# (store/structures.h).  Beside three models of the corpus go two fine-tunes
# of each, as a hub holds them: the same graph with other weights (every
# byte of the external weights file changed), another model_version and doc
# string, so each is a model of its own with its seed's structure.
#  1. The fine-tunes add model records and structure listings only: the
#     candidates and occurrences tables are those of the seeds alone,
#     partition reports no new structure for them, and their graphs are
#     stored once.
#  2. Queries answer per model: `show` lists each subgraph in three times as
#     many places, stats counts three times the candidates, `ls --subgraphs
#     --model` gives a fine-tune the subgraphs of its seed, and export's
#     task.json lists the fine-tunes among the models.
#  3. A fine-tune added to a store already built costs no partition or dedup
#     work, and the store is the one a single build of everything gives.
#  4. The same sources in another order, on 1 and 2 threads, give the same
#     store (mdb_dump), and doctor --deep is clean.
#  5. export lists the fine-tunes among a variant's models.
#  6. Re-exports (every value and node renamed, nodes in another
#     topological order) are aliases of their seeds' structures: no new
#     structure, the seeds' candidates, occurrences and subgraphs, each
#     re-export with its seed's subgraphs; added before or after their
#     seeds, the store is the same, and exec's ranges run on them.
. "$ROOT/tests/cli/lib.sh"
need_corpus
count() { mdb_stat -s "$2" "$1" | sed -n 's/^ *Entries: //p'; }
seeds=$(ls -d "$CORPUS"/models/*/ | head -3)
ft="$TEST_TMP/finetunes"
mkdir -p "$ft"
"$PY" - "$ft" $seeds <<'EOT' || fail "writing the fine-tunes failed"
import os, random, shutil, sys
import onnx
out, seeds = sys.argv[1], sys.argv[2:]
rnd = random.Random(7)
for s in seeds:
    s = s.rstrip("/")
    name = os.path.basename(s)
    for k in (1, 2):
        d = os.path.join(out, f"{name}-ft{k}")
        shutil.copytree(s, d)
        for f in os.listdir(d):
            p = os.path.join(d, f)
            if os.path.isfile(p) and f != "model.onnx":
                b = bytearray(open(p, "rb").read())
                for i in range(0, len(b), 4):   # the low byte of each float
                    b[i] ^= rnd.randrange(1, 256)
                open(p, "wb").write(bytes(b))
        shutil.rmtree(os.path.join(d, "test_data_set_0"), ignore_errors=True)
        m = onnx.load(os.path.join(d, "model.onnx"), load_external_data=False)
        m.model_version = 100 + k
        m.doc_string = f"fine-tune {k} of {name}"
        onnx.save(m, os.path.join(d, "model.onnx"))
EOT

# 1. seeds alone, then seeds and fine-tunes
pn --db "$TEST_TMP/seeds" build --variants 0 $seeds
[ "$status" -eq 0 ] || fail "build seeds: $out"
pn --db "$TEST_TMP/all" build --variants 0 $seeds "$ft"
[ "$status" -eq 0 ] || fail "build all: $out"
expect_contains "$out" "partition: 9 models (3 new structures) cut into" "fine-tunes are no new structures"
expect_contains "$out" "of 3 structures hashed" "dedup hashes each structure once"
for t in candidates occurrences subgraphs; do
	a=$(count "$TEST_TMP/seeds" $t) b=$(count "$TEST_TMP/all" $t)
	[ -n "$a" ] && [ "$a" = "$b" ] || fail "$t: $a records for the seeds, $b with the fine-tunes"
done
[ "$(count "$TEST_TMP/all" structures)" = 9 ] || fail "structures lists $(count "$TEST_TMP/all" structures) models, not 9"
[ "$(count "$TEST_TMP/all" models)" = 9 ] || fail "9 model records expected"
# their graphs are the same bytes (learned weights are kept as statistics,
# outside the graph): one copy each (store/records.h)
[ "$(count "$TEST_TMP/all" graphs)" = 3 ] || fail "graphs holds $(count "$TEST_TMP/all" graphs) graphs, not 3"
echo "1. fine-tunes: $(count "$TEST_TMP/all" candidates) candidates, as for the seeds alone"

# 2. queries per model
pn --db "$TEST_TMP/all" ls --subgraphs
hash=$(echo "$out" | awk 'NR == 1 { print $1 }')
pn --db "$TEST_TMP/seeds" show "$hash"
n1=$(echo "$out" | grep -c "found in" || true)
pn --db "$TEST_TMP/all" show "$hash"
n3=$(echo "$out" | grep -c "found in" || true)
[ "$n1" -ge 1 ] && [ "$n3" -eq $((3 * n1)) ] || fail "show: $n1 places for the seeds, $n3 with the fine-tunes"
echo "$out" | grep "found in" | grep -q -- "-ft2" || fail "show lists no fine-tune: $out"
c1=$("$PASSNET" --db "$TEST_TMP/seeds" stats | sed -n 's/^candidates  \([0-9]*\) hashed.*/\1/p')
c3=$("$PASSNET" --db "$TEST_TMP/all" stats | sed -n 's/^candidates  \([0-9]*\) hashed.*/\1/p')
[ -n "$c1" ] && [ "$c3" = $((3 * c1)) ] || fail "stats: $c1 candidates for the seeds, $c3 with the fine-tunes"
seed=$(echo "$seeds" | head -1)
name=$(basename "$seed")
pn --db "$TEST_TMP/all" ls
seed_key=$(echo "$out" | awk -v f="/$name: model.onnx" 'index($0, f) { print $1 }')
ft_key=$(echo "$out" | awk -v f=": $name-ft1/model.onnx" 'index($0, f) { print $1 }')
[ -n "$seed_key" ] && [ -n "$ft_key" ] || fail "no seed or fine-tune key in: $out"
"$PASSNET" --db "$TEST_TMP/all" ls --subgraphs --model "$seed_key" | awk '{ print $1 }' >"$TEST_TMP/seed.ls"
"$PASSNET" --db "$TEST_TMP/all" ls --subgraphs --model "$ft_key" | awk '{ print $1 }' >"$TEST_TMP/ft.ls"
[ -s "$TEST_TMP/seed.ls" ] && cmp -s "$TEST_TMP/seed.ls" "$TEST_TMP/ft.ls" ||
	fail "ls --subgraphs --model: a fine-tune does not have its seed's subgraphs"
echo "2. show: $n1 -> $n3 places; stats: $c1 -> $c3 candidates; ls --model: $(wc -l <"$TEST_TMP/ft.ls") subgraphs"

# 3. a fine-tune added later
pn --db "$TEST_TMP/later" build --variants 0 $seeds
[ "$status" -eq 0 ] || fail "build later: $out"
pn --db "$TEST_TMP/later" build --variants 0 "$ft"
[ "$status" -eq 0 ] || fail "build later (2): $out"
expect_contains "$out" "partition: 6 models (0 new structures) cut into 0 candidates" "a later fine-tune is not cut"
expect_contains "$out" "dedup: 0 candidates of 0 structures" "a later fine-tune is not hashed"
dump "$TEST_TMP/all" "$TEST_TMP/all.dump"
# the sources table records each build's arguments: compare the rest
dump "$TEST_TMP/later" "$TEST_TMP/later.dump"
strip() { awk '/^database=/{ skip = ($0 ~ /=sources$|=meta$/) } !skip' "$1"; }
strip "$TEST_TMP/all.dump" >"$TEST_TMP/all.cmp"
strip "$TEST_TMP/later.dump" >"$TEST_TMP/later.cmp"
cmp -s "$TEST_TMP/all.cmp" "$TEST_TMP/later.cmp" || fail "a store built in two steps differs from one built at once"
echo "3. fine-tunes added later: no partition or dedup work, the same store"

# 4. order and threads
pn --db "$TEST_TMP/rev" -j 1 build --variants 0 "$ft" $(echo "$seeds" | tac)
[ "$status" -eq 0 ] || fail "build reversed: $out"
dump "$TEST_TMP/rev" "$TEST_TMP/rev.dump"
strip "$TEST_TMP/rev.dump" >"$TEST_TMP/rev.cmp"
cmp -s "$TEST_TMP/all.cmp" "$TEST_TMP/rev.cmp" || fail "another order on one thread gives another store"
pn --db "$TEST_TMP/all" doctor --deep
[ "$status" -eq 0 ] || fail "doctor: $out"
echo "4. order and threads: the same store; $out"

# 5. export lists the fine-tunes among a variant's models
pn --db "$TEST_TMP/all" exec --strategy fusion --min-nodes 2 --limit 30 --warmup 0 --trials 1
[ "$status" -eq 0 ] || fail "exec: $out"
pn --db "$TEST_TMP/all" export --out "$TEST_TMP/set" --tasks 5
[ "$status" -eq 0 ] || fail "export: $out"
"$PY" - "$TEST_TMP/set" <<'EOT' || fail "task.json does not list the fine-tunes with their seeds"
import glob, json, sys
seen = 0
for f in glob.glob(sys.argv[1] + "/tasks/*/task.json"):
    for v in json.load(open(f))["variants"]:
        paths = [m["path"] for m in v["models"]]
        seeds = [p for p in paths if "-ft" not in p]
        fts = [p for p in paths if "-ft" in p]
        assert len(fts) == 2 * len(seeds), (f, paths)
        assert len(paths) == len(set(paths)), (f, paths)
        seen += 1
assert seen, "no variant exported"
print(f"5. export: {seen} variants, each listing two fine-tunes per seed")
EOT

# 6. re-exports
rx="$TEST_TMP/reexports"
mkdir -p "$rx"
# each seed renamed and its nodes listed in another topological order
# (tests/fixtures/transform_model.py reexport), beside its weights
for s in $seeds; do
	d="$rx/$(basename "$s")-rx"
	cp -r "$s" "$d"
	rm -rf "$d/test_data_set_0"
	"$PY" "$ROOT/tests/fixtures/transform_model.py" reexport "$s/model.onnx" "$d/model.onnx" 11 ||
		fail "writing the re-export of $s failed"
done
pn --db "$TEST_TMP/rx" build --variants 0 $seeds "$rx"
[ "$status" -eq 0 ] || fail "build with re-exports: $out"
expect_contains "$out" "partition: 6 models (3 new structures) cut into" "re-exports are no new structures"
for t in candidates occurrences subgraphs; do
	a=$(count "$TEST_TMP/seeds" $t) b=$(count "$TEST_TMP/rx" $t)
	[ -n "$a" ] && [ "$a" = "$b" ] || fail "$t: $a records for the seeds, $b with the re-exports"
done
[ "$(count "$TEST_TMP/rx" aliases)" = 6 ] || fail "aliases holds $(count "$TEST_TMP/rx" aliases), not 6"
pn --db "$TEST_TMP/rx" ls
rx_key=$(echo "$out" | awk -v f=": $name-rx/model.onnx" 'index($0, f) { print $1 }')
seed_key=$(echo "$out" | awk -v f="/$name: model.onnx" 'index($0, f) { print $1 }')
[ -n "$rx_key" ] && [ -n "$seed_key" ] || fail "no seed or re-export key in: $out"
"$PASSNET" --db "$TEST_TMP/rx" ls --subgraphs --model "$seed_key" | awk '{ print $1 }' >"$TEST_TMP/seed.ls"
"$PASSNET" --db "$TEST_TMP/rx" ls --subgraphs --model "$rx_key" | awk '{ print $1 }' >"$TEST_TMP/rx.ls"
[ -s "$TEST_TMP/seed.ls" ] && cmp -s "$TEST_TMP/seed.ls" "$TEST_TMP/rx.ls" ||
	fail "ls --subgraphs --model: a re-export does not have its seed's subgraphs"
pn --db "$TEST_TMP/rx-first" build --variants 0 "$rx"
[ "$status" -eq 0 ] || fail "build re-exports first: $out"
pn --db "$TEST_TMP/rx-first" -j 1 build --variants 0 $(echo "$seeds" | tac)
[ "$status" -eq 0 ] || fail "build seeds after re-exports: $out"
expect_contains "$out" "partition: 3 models (0 new structures) cut into 0 candidates" "seeds after their re-exports are not cut"
dump "$TEST_TMP/rx" "$TEST_TMP/rx.dump"
dump "$TEST_TMP/rx-first" "$TEST_TMP/rx-first.dump"
strip "$TEST_TMP/rx.dump" >"$TEST_TMP/rx.cmp"
strip "$TEST_TMP/rx-first.dump" >"$TEST_TMP/rx-first.cmp"
cmp -s "$TEST_TMP/rx.cmp" "$TEST_TMP/rx-first.cmp" || fail "re-exports first give another store"
pn --db "$TEST_TMP/rx" exec --strategy fusion --min-nodes 2 --limit 10 --warmup 0 --trials 1
[ "$status" -eq 0 ] || fail "exec with re-exports: $out"
"$PY" - "$TEST_TMP/rx" "$rx_key" <<'EOT' || fail "exec's ranges did not run the re-export"
import subprocess, sys
dump = subprocess.run(["mdb_dump", "-s", "ranges", sys.argv[1]], capture_output=True, text=True, check=True).stdout
keys = [l.split()[0] for l in dump.split("\n")[1:] if l.startswith(" ")][::2]
assert any(k.startswith(sys.argv[2][:32].lower()) for k in keys), "no ranges record of the re-export"
EOT
pn --db "$TEST_TMP/rx" doctor --deep
[ "$status" -eq 0 ] || fail "doctor with re-exports: $out"
echo "6. re-exports: 3 new structures for 6 models, the seeds' $(count "$TEST_TMP/rx" candidates) candidates, the same store in either order"
echo "structures: ok"
