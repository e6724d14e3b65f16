# Renaming every value and node, listing nodes in another topological order,
# reordering graph inputs and swapping the operands of commutative ops change
# nothing: every model of the corpus keeps its whole-graph hash and its
# set of subgraph hashes.
. "$ROOT/tests/cli/lib.sh"
need_corpus
PY=${PYTHON:-/usr/bin/python3}
MODES="rename permute inputs swap all"

# 1. every transformed copy, written by one Python process (its start-up and
# onnx's import cost more than a transformation), each in a folder of its
# own beside links to the model's weights
: > "$TEST_TMP/jobs"
: > "$TEST_TMP/files"
for d in "$CORPUS"/models/*/; do
	name=$(basename "$d")
	mkdir -p "$TEST_TMP/$name"
	echo "$d/model.onnx $TEST_TMP/$name/orig" >> "$TEST_TMP/files"
	seed=1
	for mode in $MODES; do
		out_dir="$TEST_TMP/$name/$mode"
		mkdir -p "$out_dir"
		for f in "$d"*; do
			[ "$(basename "$f")" = model.onnx ] || ln -sf "$f" "$out_dir/"
		done
		echo "$mode $d/model.onnx $out_dir/model.onnx $seed" >> "$TEST_TMP/jobs"
		echo "$out_dir/model.onnx $out_dir/hash" >> "$TEST_TMP/files"
		seed=$((seed + 1))
	done
done
"$PY" "$ROOT/tests/fixtures/transform_model.py" --batch < "$TEST_TMP/jobs" || fail "transform_model.py"

# 2. the hashes of every original and copy, two passnet processes at a time
# (hash is single-threaded): OUT.sub the subgraph hashes, OUT.whole the
# whole-graph hash (the corpus itself may be read-only)
export PASSNET
xargs -P 2 -n 2 sh -c '"$PASSNET" hash --subgraphs "$1" > "$2.sub" &&
	"$PASSNET" hash "$1" | cut -c1-65 > "$2.whole"' hash < "$TEST_TMP/files" ||
	fail "passnet hash failed on a model or its copy"

# 3. each copy against its original
bad=0
checked=0
for d in "$CORPUS"/models/*/; do
	name=$(basename "$d")
	orig="$TEST_TMP/$name/orig"
	for mode in $MODES; do
		new="$TEST_TMP/$name/$mode/hash"
		if ! cmp -s "$orig.sub" "$new.sub"; then
			echo "$name: $mode changes the subgraph hashes ($(diff "$orig.sub" "$new.sub" | grep -c '^[<>]') differ)"
			bad=$((bad + 1))
		fi
		if ! cmp -s "$orig.whole" "$new.whole"; then
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
