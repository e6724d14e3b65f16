# Inputs by meaning (runtime/inputs.c's rule table): integer inputs that set
# lengths, token ids, masks and rates get values the model expects, and the
# binding's validation run uses the same inputs, so that
#  (a) torchaudio's Conformer, exported with dynamic axes (batch, time) over
#      (features, lengths), binds without a warning and `run KEY` runs: its
#      lengths equal the frames, which the traced arange fixes at 20;
#  (b) a model folder whose test_data_set_0 is empty, or holds fewer inputs
#      than the model takes, binds as the model file alone does (build and
#      run FILE alike);
#  (c) token ids that index an embedding of 3 rows (through a Cast) lie
#      below 3, at the rule's sequence 128, where an id of 3 fails the run;
#  (d) an int attention mask holds 0/1, and a scalar the graph compares with
#      22050 is 22050.
# Fixtures: tests/fixtures/meaning_models.py, symbolic_models.py (state.onnx).
. "$ROOT/tests/cli/lib.sh"
fx="$TEST_TMP/fx"
"$PY" "$ROOT/tests/fixtures/meaning_models.py" "$fx" conformer >"$TEST_TMP/fx.log" 2>&1 ||
	fail "fixture: $(tail -n 3 "$TEST_TMP/fx.log")"
"$PY" "$ROOT/tests/fixtures/symbolic_models.py" "$fx/sym" || fail "fixture symbolic_models"

first_line() { printf '%s\n' "$out" | head -n 1; }

# values_of FILE.pb: the tensor's distinct values, sorted, space-separated
values_of() {
	"$PY" -c 'import onnx, sys
from onnx import numpy_helper
a = numpy_helper.to_array(onnx.load_tensor(sys.argv[1]))
print(" ".join(str(v) for v in sorted(set(a.ravel().tolist()))))' "$1" || fail "$1 does not decode"
}

# --- (a) the Conformer -------------------------------------------------------
db="$TEST_TMP/conformer"
pn --db "$db" build "$fx/conformer.onnx"
[ "$status" -eq 0 ] || fail "build conformer: $out"
case "$out" in *"stored with warnings"*) fail "conformer stored with a warning: $out" ;; esac
expect_contains "$out" "1 models and" "the conformer is partitioned"
expect_contains "$out" ", 0 failed," "partition of the conformer"
k=$(key_of "$db" conformer.onnx)
pn --db "$db" show "$k"
expect_contains "$out" "binding    batch=1 time=20  (rule; time=20 as the export traced it)" "conformer binding"
expect_contains "$out" "role     lengths=lengths" "lengths role"
pn --db "$db" ls --warnings
case "$out" in *"$k"*) fail "conformer has warnings: $out" ;; esac
pn --db "$db" run "$k" --write-inputs "$TEST_TMP/conf_in"
[ "$status" -eq 0 ] || fail "run conformer KEY: $out"
expect_contains "$out" "out  float32[1,20,16]" "conformer output at the bound frames"
expect_eq "$(values_of "$TEST_TMP/conf_in/input_1.pb")" "20" "lengths = the frames"

# --- (b) an empty or partial test set is no binding source --------------------
mkdir -p "$TEST_TMP/empty/test_data_set_0" "$TEST_TMP/partial/test_data_set_0"
cp "$fx/sym/state.onnx" "$TEST_TMP/empty/model.onnx"
cp "$fx/sym/state.onnx" "$TEST_TMP/partial/model.onnx"
# input 0 only, 1024 samples: as a binding source it would say sequence=1024
"$PY" -c 'import numpy as np, sys
from onnx import numpy_helper
open(sys.argv[1], "wb").write(numpy_helper.from_array(np.ones((1, 1024), np.float32), "input").SerializeToString())' \
	"$TEST_TMP/partial/test_data_set_0/input_0.pb" || fail "partial test set"
pn run "$fx/sym/state.onnx"
[ "$status" -eq 0 ] || fail "run state.onnx alone: $out"
alone=$(first_line)
expect_contains "$alone" "binding: batch=1 sequence=512 sr=16000 (searched" "state.onnx alone"
for d in empty partial; do
	pn run "$TEST_TMP/$d"
	[ "$status" -eq 0 ] || fail "run beside the $d test set: $out"
	expect_eq "$(first_line)" "$alone" "run beside the $d test set binds as alone"
done
binding_of() {   # binding_of DB FILE: the show line of the model's binding
	pn --db "$1" build "$2"
	[ "$status" -eq 0 ] || fail "build $2: $out"
	pn --db "$1" show "$(key_of "$1" "$3")"
	printf '%s\n' "$out" | grep '^binding '
}
b_alone=$(binding_of "$TEST_TMP/db_alone" "$fx/sym/state.onnx" state.onnx)
expect_contains "$b_alone" "sequence=512 sr=16000" "state.onnx alone, stored"
for d in empty partial; do
	b=$(binding_of "$TEST_TMP/db_$d" "$TEST_TMP/$d" model.onnx)
	expect_eq "$b" "$b_alone" "stored beside the $d test set binds as alone"
done

# --- (c) token ids below the embedding's rows -------------------------------
pn run "$fx/tokens.onnx" --write-inputs "$TEST_TMP/tok"
[ "$status" -eq 0 ] || fail "run tokens: $out"
expect_eq "$(first_line)" "binding: batch=1 sequence=128 (rule)" "tokens at the rule's sequence"
expect_eq "$(values_of "$TEST_TMP/tok/input_0.pb")" "0 1 2" "token ids in [0, 3), spread over the rows"
# the executor checks the Gather's indices: an id of 3 fails
"$PY" -c 'import numpy as np, sys
from onnx import numpy_helper
open(sys.argv[1], "wb").write(numpy_helper.from_array(np.full((1, 128), 3, np.int64), "ids").SerializeToString())' \
	"$TEST_TMP/tok/input_0.pb" || fail "out-of-range ids"
pn run "$fx/tokens.onnx" --inputs "$TEST_TMP/tok"
[ "$status" -ne 0 ] || fail "an id of 3 in an embedding of 3 rows ran: $out"

# --- (d) a mask holds 0/1; a compared scalar takes its constant ----------------
pn run "$fx/mask.onnx" --write-inputs "$TEST_TMP/mask"
[ "$status" -eq 0 ] || fail "run mask: $out"
expect_eq "$(values_of "$TEST_TMP/mask/input_1.pb")" "0 1" "attention_mask holds 0/1, both"
expect_eq "$(values_of "$TEST_TMP/mask/input_2.pb")" "22050" "fs = the constant the graph compares it with"

echo "inputs_meaning: lengths, token ids, masks and rates as the model means them; partial test sets ignored"
