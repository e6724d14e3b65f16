# `passnet run` binds a model file's symbolic dims as extract does
# (extract/binding.h) and says so on its first line, "binding: ... (how)":
# the rule, the search, --dim, the dims of the file's own test set; a stored
# model says it ran with its stored binding.  --write-model writes a stored
# model with the weights the run regenerated: running that file gives the
# same outputs.  Fixtures: tests/fixtures/symbolic_models.py.
. "$ROOT/tests/cli/lib.sh"
fx="$TEST_TMP/fx"
/usr/bin/python3 "$ROOT/tests/fixtures/symbolic_models.py" "$fx" || fail "fixture"

first_line() { printf '%s\n' "$out" | head -n 1; }

pn run "$fx/audio.onnx" --write-inputs "$TEST_TMP/audio"
[ "$status" -eq 0 ] || fail "run audio: $out"
expect_eq "$(first_line)" "binding: x:0=1 x:1=16000 (rule)" "a file's binding is the rule's"
dims=$("$PY" -c 'import onnx, sys; t = onnx.TensorProto(); t.ParseFromString(open(sys.argv[1], "rb").read()); print(list(t.dims))' \
	"$TEST_TMP/audio/input_0.pb") || fail "input_0.pb does not decode"
expect_eq "$dims" "[1, 16000]" "the seeded input has the bound shape"
pn run "$fx/image.onnx"
[ "$status" -eq 0 ] || fail "run image: $out"
expect_eq "$(first_line)" "binding: N=1 H=224 W=224 (rule)" "image at 224, not 1x1"
# 16000 samples do not make rows of 512, 256 neither: the search finds 512
pn run "$fx/state.onnx"
[ "$status" -eq 0 ] || fail "run state: $out"
expect_contains "$(first_line)" "binding: batch=1 sequence=512 sr=16000 (searched: passed at try 3" "searched"
# --dim fixes a name; the rest follow the rule
mkdir -p "$TEST_TMP/case"
pn run "$fx/audio.onnx" --dim x:1=4000 --write-inputs "$TEST_TMP/case/test_data_set_0"
[ "$status" -eq 0 ] || fail "run audio --dim: $out"
expect_eq "$(first_line)" "binding: x:1=4000 x:0=1 (rule, with --dim)" "--dim first, then the rule"
# a model beside its test set runs on it, bound as the set shows
cp "$fx/audio.onnx" "$TEST_TMP/case/model.onnx"
pn run "$TEST_TMP/case"
[ "$status" -eq 0 ] || fail "run on the test set: $out"
expect_eq "$(first_line)" "binding: x:0=1 x:1=4000 (test set)" "the test set's dims"

# a stored model runs with its stored binding, and --write-model writes it
# with the weights that run regenerated (audio.onnx keeps one as metadata)
db="$TEST_TMP/db"
pn --db "$db" extract "$fx/audio.onnx"
[ "$status" -eq 0 ] || fail "extract: $out"
pn --db "$db" ls
key=$(printf '%s\n' "$out" | awk '{print $1}')
pn --db "$db" run "$key" --seed 5 --write-model "$TEST_TMP/w.onnx" --outputs "$TEST_TMP/k"
[ "$status" -eq 0 ] || fail "run KEY: $out"
expect_eq "$(first_line)" "binding: x:0=1 x:1=16000 (stored: rule)" "the stored binding"
pn run "$TEST_TMP/w.onnx" --seed 5 --outputs "$TEST_TMP/f"
[ "$status" -eq 0 ] || fail "run the written model: $out"
for o in "$TEST_TMP/k"/output_*.pb; do
	cmp -s "$o" "$TEST_TMP/f/$(basename "$o")" || fail "written model: $(basename "$o") differs from the KEY run's"
done
pn --db "$db" run "$key" --seed 6 --write-model "$TEST_TMP/w6.onnx"
cmp -s "$TEST_TMP/w.onnx" "$TEST_TMP/w6.onnx" && fail "--seed does not change the regenerated weights"
pn run "$fx/state.onnx" --write-model "$TEST_TMP/x.onnx"
[ "$status" -ne 0 ] || fail "--write-model of a file was accepted"
expect_contains "$out" "--write-model: $fx/state.onnx is a model file already" "one-line error"
echo "run_binding: files bound as extract binds them, stored models as stored"
