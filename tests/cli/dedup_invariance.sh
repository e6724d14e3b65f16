# Renaming every value and node, listing nodes in another topological order,
# reordering graph inputs and swapping the operands of commutative ops change
# nothing: every model of the corpus keeps its whole-graph hash and its
# set of subgraph hashes.
. "$ROOT/tests/cli/lib.sh"
need_corpus
PY=${PYTHON:-/usr/bin/python3}
bad=0
checked=0
for d in "$CORPUS"/models/*/; do
	name=$(basename "$d")
	out_dir="$TEST_TMP/$name"
	mkdir -p "$out_dir"
	for f in "$d"*; do
		[ "$(basename "$f")" = model.onnx ] || ln -sf "$f" "$out_dir/"
	done
	"$PASSNET" hash --subgraphs "$d/model.onnx" > "$TEST_TMP/orig.sub" || fail "$name: hash"
	"$PASSNET" hash "$d/model.onnx" | cut -c1-65 > "$TEST_TMP/orig.whole"
	seed=1
	for mode in rename permute inputs swap all; do
		"$PY" "$ROOT/tests/fixtures/transform_model.py" "$mode" "$d/model.onnx" "$out_dir/model.onnx" $seed
		seed=$((seed + 1))
		"$PASSNET" hash --subgraphs "$out_dir/model.onnx" > "$TEST_TMP/new.sub" || fail "$name/$mode: hash"
		"$PASSNET" hash "$out_dir/model.onnx" | cut -c1-65 > "$TEST_TMP/new.whole"
		if ! cmp -s "$TEST_TMP/orig.sub" "$TEST_TMP/new.sub"; then
			echo "$name: $mode changes the subgraph hashes ($(diff "$TEST_TMP/orig.sub" "$TEST_TMP/new.sub" | grep -c '^[<>]') differ)"
			bad=$((bad + 1))
		fi
		if ! cmp -s "$TEST_TMP/orig.whole" "$TEST_TMP/new.whole"; then
			echo "$name: $mode changes the whole-graph hash"
			bad=$((bad + 1))
		fi
		checked=$((checked + 1))
	done
done
echo "$checked transformed models checked, $bad differences"
[ "$bad" -eq 0 ] || fail "$bad transformations changed a hash"
models=$(ls -d "$CORPUS"/models/*/ | wc -l)
[ "$models" -ge 10 ] || fail "only $models model folders in $CORPUS"
expect_eq "$checked" $((models * 5)) "transformed models checked (5 per model)"
