# `passnet export-onnx` writes every fusion subgraph of the corpus as a
# standalone model that onnx's checker (full check, with shape inference)
# accepts.  Allowed exceptions, each checked: subgraphs whose boundary rank
# depends on data are refused with that reason, and a subgraph the checker
# rejects must come from a source model the checker rejects too.
# (Built with --no-weight-check: what this tests never reads the weight
# check, weights_scale.sh shows it changes no subgraph, and its runs are
# most of extract's time on this corpus.)
. "$ROOT/tests/cli/lib.sh"
need_corpus
PY=${PYTHON:-/usr/bin/python3}
db="$TEST_TMP/db"
# only the fusion cuts are looked at, so only they are made
for stage in "extract --no-weight-check $CORPUS" "partition --strategy fusion" dedup; do
	pn --db "$db" $stage
	[ "$status" -eq 0 ] || fail "$stage: $out"
done
pn --db "$db" ls --subgraphs --strategy fusion
echo "$out" | cut -c1-32 > "$TEST_TMP/hashes"
total=$(wc -l < "$TEST_TMP/hashes")
# every stored model (folders and archive members) has fusion subgraphs
nmodels=0
for k in $("$PASSNET" --db "$db" ls | cut -c1-32); do
	n=$("$PASSNET" --db "$db" ls --subgraphs --model "$k" --strategy fusion | wc -l)
	[ "$n" -ge 1 ] || fail "model $k has no fusion subgraph"
	nmodels=$((nmodels + 1))
done
[ "$nmodels" -ge "$(ls -d "$CORPUS"/models/*/ | wc -l)" ] || fail "only $nmodels models stored"
[ "$total" -ge "$nmodels" ] || fail "only $total fusion subgraphs for $nmodels models"
mkdir -p "$TEST_TMP/onnx" "$TEST_TMP/refused"
# two export-onnx processes at a time (each is single-threaded); a refusal
# leaves its message in refused/HASH
export PASSNET db TEST_TMP
xargs -P 2 -n 1 sh -c '"$PASSNET" --db "$db" export-onnx "$1" "$TEST_TMP/onnx/$1.onnx" \
	> "$TEST_TMP/refused/$1" 2>&1 && rm "$TEST_TMP/refused/$1"' export < "$TEST_TMP/hashes" || true
refused=0
for f in "$TEST_TMP"/refused/*; do
	[ -e "$f" ] || continue
	expect_contains "$(cat "$f")" "has unknown rank (it depends on data)" "export of $(basename "$f")"
	refused=$((refused + 1))
done
"$PY" "$ROOT/tests/fixtures/check_onnx.py" "$TEST_TMP"/onnx/*.onnx > "$TEST_TMP/checked"
ok=$(grep -c '^ok ' "$TEST_TMP/checked" || true)
grep '^bad ' "$TEST_TMP/checked" > "$TEST_TMP/bad" || true
while read -r _ f rest; do
	h=$(basename "$f" .onnx:)
	h=${h%.onnx:}
	# a place that is a plain file (not inside an archive) to check
	src=$("$PASSNET" --db "$db" show "$h" | sed -n 's/^  found in  [0-9a-f]* [^:]*: \(.*\)  (.*/\1/p' |
		grep -v '!' | head -n 1)
	[ -n "$src" ] || fail "checker rejects $h, found only inside archives"
	[ -f "$CORPUS/$src" ] || fail "$CORPUS/$src is not a file"
	echo "checker rejects $h ($rest), found in $src"
	"$PY" "$ROOT/tests/fixtures/check_onnx.py" "$CORPUS/$src" | grep -q '^bad ' ||
		fail "the checker rejects subgraph $h but accepts its source model $src"
done < "$TEST_TMP/bad"
echo "$total fusion subgraphs: $ok exported and accepted by onnx.checker, $refused refused (data-dependent rank)"
[ $((ok + refused)) -ge $((total * 98 / 100)) ] || fail "too few subgraphs exported and checked"
