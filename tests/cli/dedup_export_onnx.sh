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
# one export-onnx process for them all (--out-dir, hashes on stdin); a
# refusal is one stderr line naming its subgraph, and the rest go on
status=0
"$PASSNET" --db "$db" export-onnx --out-dir "$TEST_TMP/onnx" - < "$TEST_TMP/hashes" \
	> "$TEST_TMP/export.out" 2> "$TEST_TMP/export.err" || status=$?
refused=0
while read -r line; do
	case $line in "passnet: export-onnx: "[0-9a-f]*": "*) ;; *) fail "export-onnx printed: $line" ;; esac
	expect_contains "$line" "has unknown rank (it depends on data)" "an export refused"
	refused=$((refused + 1))
done < "$TEST_TMP/export.err"
expect_contains "$(cat "$TEST_TMP/export.out")" "export-onnx: $total subgraphs, $((total - refused)) written to $TEST_TMP/onnx, $refused failed" "the summary"
[ "$status" -eq $((refused > 0 ? 1 : 0)) ] || fail "export-onnx exited $status with $refused refused"
[ "$(ls "$TEST_TMP/onnx" | wc -l)" -eq $((total - refused)) ] || fail "not one file per subgraph written"
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

# a hash that names no subgraph: one line naming it, the others written, status 1
mkdir -p "$TEST_TMP/few"
set -- $(head -n 2 "$TEST_TMP/hashes")
status=0
"$PASSNET" --db "$db" export-onnx --out-dir "$TEST_TMP/few" "$1" ffff0000 "$2" \
	> "$TEST_TMP/few.out" 2> "$TEST_TMP/few.err" || status=$?
[ "$status" -eq 1 ] || fail "export-onnx with a missing hash exited $status"
expect_eq "$(cat "$TEST_TMP/few.err")" "passnet: export-onnx: ffff0000: no subgraph ffff0000" "the one error line"
[ -f "$TEST_TMP/few/$1.onnx" ] && [ -f "$TEST_TMP/few/$2.onnx" ] || fail "the good hashes were not written"
