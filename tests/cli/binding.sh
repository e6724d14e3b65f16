# Base binding of symbolic dims (extract/binding.h): one model per input role
# (tests/fixtures/symbolic_models.py).  Each gets the binding its role's rule
# gives, or the smallest one the search finds, validated by inference and a
# run; `show` prints it and how it was chosen; --dim overrides (also an
# unnamed dim, by INPUT:AXIS, and a configuring scalar); a model no binding
# satisfies is recorded with every try; partition and dedup succeed on the
# others; the store is the same for 1 and 2 threads and any argument order.
. "$ROOT/tests/cli/lib.sh"
fx="$TEST_TMP/fx"
/usr/bin/python3 "$ROOT/tests/fixtures/symbolic_models.py" "$fx" || fail "fixture"

# show_of DB FILE: `show` of that model in $out
show_of() {
	k=$(key_of "$1" "$2")
	pn --db "$1" show "$k"
	[ "$status" -eq 0 ] || fail "show $2: $out"
}

db="$TEST_TMP/db"
good="$fx/image.onnx $fx/audio.onnx $fx/tokens.onnx $fx/state.onnx"
pn --db "$db" build $good
[ "$status" -eq 0 ] || fail "build of the four bindable models: $out"
expect_contains "$out" "4 models and 36 shape variants (40 new structures) cut into" "partition"
expect_contains "$out" "0 failed" "partition and dedup"

show_of "$db" image.onnx
expect_contains "$out" "binding    N=1 H=224 W=224  (rule)" "image binding"
expect_contains "$out" "role     x=image NCHW" "image role"
expect_contains "$out" "status     ok" "image status"
show_of "$db" audio.onnx
expect_contains "$out" "binding    x:0=1 x:1=16000  (rule)" "audio binding: unnamed dims as INPUT:AXIS"
expect_contains "$out" "role     x=audio" "audio role"
show_of "$db" tokens.onnx
expect_contains "$out" "binding    batch=1 sequence=128  (rule)" "token binding"
expect_contains "$out" "role     input_ids=token ids" "token role"
expect_contains "$out" "role     attention_mask=mask" "mask role"
# 16000 samples do not make rows of 512; 256 neither; 512 does (try 3)
show_of "$db" state.onnx
expect_contains "$out" "binding    batch=1 sequence=512 sr=16000  (searched: passed at try 3" "state binding"
expect_contains "$out" "role     state=state" "state role"
expect_contains "$out" "role     sr=config scalar" "sr role"
expect_contains "$out" "tried    batch=1,sequence=16000,sr=16000: " "first try recorded"
expect_contains "$out" "cannot reshape 16000 elements" "first try's error"

# every stage infers with the binding: the image's subgraphs are cut at 224
pn --db "$db" ls --subgraphs --strategy sole --model "$(key_of "$db" image.onnx)" --json
h=$(echo "$out" | grep '"ops":\["Relu"\]' | sed 's/.*"hash":"\([0-9a-f]*\)".*/\1/')
[ -n "$h" ] || fail "no sole Relu subgraph in the image model: $out"
pn --db "$db" show "$h"
expect_contains "$out" "float32[1,8,112,112]" "image subgraphs at the bound size"

# the run uses the stored binding, sr included: the seeded sr is 16000, so
# the 512-sample branch runs; an unknown rate takes the branch nothing fits
k=$(key_of "$db" state.onnx)
pn --db "$db" run "$k"
[ "$status" -eq 0 ] || fail "run state model with its binding: $out"
expect_contains "$out" "stateN  float32[2,1,64]" "state output"
pn --db "$db" run "$k" --dim sr=3
[ "$status" -ne 0 ] || fail "run with sr=3 should take the 7919 branch and fail: $out"
expect_contains "$out" "7919" "sr=3 branch"

# --dim overrides: H,W at 1 is what the image cannot take, and is recorded so
db2="$TEST_TMP/db2"
pn --db "$db2" extract --dim H=1 --dim W=1 --dim x:1=4000 --dim sr=8000 --dim unused=5 $good
[ "$status" -eq 0 ] || fail "extract with --dim: $out"
show_of "$db2" image.onnx
expect_contains "$out" "status     warning" "image at 1x1"
expect_contains "$out" "binding    H=1 W=1 N=1  (none of 1 tries passes inference" "image at 1x1 binding"
expect_contains "$out" "window 2 exceeds padded input 1" "image at 1x1 error"
show_of "$db2" audio.onnx
expect_contains "$out" "binding    x:1=4000 x:0=1  (rule, with --dim)" "--dim on an unnamed dim"
show_of "$db2" state.onnx
expect_contains "$out" "binding    sr=8000 batch=1 sequence=256  (searched: passed at try 2" "--dim sr=8000"
show_of "$db2" tokens.onnx
expect_contains "$out" "binding    batch=1 sequence=128  (rule)" "--dim names a model does not use are not its binding"
db3="$TEST_TMP/db3"
pn --db "$db3" extract --dim N=1 --dim H=64 --dim W=64 "$fx/image.onnx"
show_of "$db3" image.onnx
expect_contains "$out" "binding    N=1 H=64 W=64  (given by --dim)" "all dims given"
expect_contains "$out" "status     ok" "image at 64x64"
db5="$TEST_TMP/db5"
pn --db "$db5" extract --dim N=1 --dim H=1 --dim W=1 "$fx/image.onnx"
show_of "$db5" image.onnx
expect_contains "$out" "binding    N=1 H=1 W=1  (given by --dim, which fails)" "all dims given, failing"
expect_contains "$out" "status     warning" "image given 1x1"

# no binding satisfies odd.onnx: stored with every try, never cut
db4="$TEST_TMP/db4"
pn --db "$db4" build "$fx/odd.onnx"
expect_contains "$out" "partition: 0 models (0 new structures) cut into 0 candidates" "odd.onnx is not cut"
expect_contains "$out" "1 failed" "odd.onnx's partition failure is counted"
expect_contains "$out" "cannot reshape 16000 elements into 9973" "odd partition error"
pn --db "$db4" ls --status warning
expect_contains "$out" "odd.onnx" "odd listed as warning"
show_of "$db4" odd.onnx
expect_contains "$out" "none of 10 tries passes inference; kept the base" "odd how"
tries=$(echo "$out" | grep -c "^  tried    batch=1,n=[0-9]*: node .*cannot reshape [0-9]* elements into 9973" || true)
expect_eq "$tries" "10" "odd tries recorded"
pn --db "$db4" ls --subgraphs
expect_eq "$out" "" "odd.onnx is not cut"

# determinism: 1 vs 2 threads, arguments reversed
pn --db "$TEST_TMP/d1" -j 1 build $good "$fx/odd.onnx"
s1=$status
pn --db "$TEST_TMP/d2" -j 2 build "$fx/odd.onnx" "$fx/state.onnx" "$fx/tokens.onnx" "$fx/audio.onnx" "$fx/image.onnx"
expect_eq "$status" "$s1" "build status for either order"
mdb_dump -a "$TEST_TMP/d1" > "$TEST_TMP/d1.dump" || fail "mdb_dump d1"
mdb_dump -a "$TEST_TMP/d2" > "$TEST_TMP/d2.dump" || fail "mdb_dump d2"
cmp "$TEST_TMP/d1.dump" "$TEST_TMP/d2.dump" || fail "store differs between -j1 and -j2 with the sources reversed"
echo "binding: roles, rule, search, --dim, unsatisfiable model and determinism checked"
