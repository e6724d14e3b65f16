# Shape variants (extract/variants.h) of models with symbolic dims
# (tests/fixtures/symbolic_models.py):
#  1. the ladder: the image model gets its nine (batch, size) pairs, the
#     state model whose samples must be a multiple of 512 is refused where
#     they are not and then gets batch-only variants;
#  2. size limits: wide.onnx's variants are run below 2^24 elements, validated
#     by inference alone above, refused above 2^26;
#  3. a variant is a model of its own: listed, shown with its base, run at
#     its binding, partitioned and deduplicated; doctor is clean;
#  4. variants group under one pattern: the image model's first Conv at ten
#     shapes is ten subgraphs of one pattern, each occurrence naming its
#     binding;
#  5. --variants 0 makes none, --variants 3 at most three;
#  6. the store is the same for 1 and 2 threads and either argument order;
#  7. a fixed batch is generalized (extract/generalize.h): fixed.onnx at
#     batches 2..512, its Reshape constant rewritten; center.onnx, whose
#     samples depend on each other, is not (the unit test test_generalize
#     has the batch-independence check rejecting one that mixes samples).
. "$ROOT/tests/cli/lib.sh"
fx="$TEST_TMP/fx"
/usr/bin/python3 "$ROOT/tests/fixtures/symbolic_models.py" "$fx" || fail "fixture"
models="$fx/image.onnx $fx/state.onnx $fx/wide.onnx"

db="$TEST_TMP/db"
pn --db "$db" build $models
[ "$status" -eq 0 ] || fail "build: $out"
# nine each: state and wide fill up from the batch-only pass
expect_contains "$out" "3 new models" "extract"
expect_contains "$out" "27 shape variants" "extract counts the variants"
expect_contains "$out" "3 models and 27 shape variants (30 new structures) cut into" "partition"
expect_contains "$out" "0 failed" "partition and dedup"

# 1. the ladder
pn --db "$db" show "$(key_of "$db" image.onnx)"
expect_contains "$out" "variants   N=1,H=128,W=128: inference and one run" "image slot 0"
expect_contains "$out" "N=2,H=192,W=192: inference and one run" "image slot 2 (paired batch)"
expect_contains "$out" "N=16,H=512,W=512: inference and one run" "image slot 8"
n=$(echo "$out" | grep -c ": inference and one run")
expect_eq "$n" 9 "image variants"
pn --db "$db" show "$(key_of "$db" state.onnx)"
expect_contains "$out" "batch=2,sequence=4000,sr=16000: refused: " "state: 4000 samples refused"
expect_contains "$out" "cannot reshape 8000 elements" "state: the reason"
expect_contains "$out" "batch=2,sequence=512,sr=16000: inference and one run" "state: batch-only pass"

# 2. size limits
pn --db "$db" show "$(key_of "$db" wide.onnx)"
expect_contains "$out" "N=4,H=256,W=256: inference and one run" "wide: 2^24 elements are run"
expect_contains "$out" "N=4,H=320,W=320: inference only: " "wide: over the run limit"
expect_contains "$out" "N=8,H=384,W=384: refused: value 'y' holds 75497472 elements, over the limit of 67108864" \
	"wide: over the size limit"

# 3. a variant is a model
base=$(key_of "$db" image.onnx)
pn --db "$db" ls --variants --json
v=$(echo "$out" | grep "\"variant_of\":\"$base\"" | grep '"variant":3}' | sed 's/.*"key":"\([0-9a-f]*\)".*/\1/')
[ -n "$v" ] || fail "variant 3 of the image model not listed: $out"
pn --db "$db" show "$v"
[ "$status" -eq 0 ] || fail "show variant: $out"
expect_contains "$out" "variant    3 of model $base: N=2 H=192 W=192  (inference and one run)" "show variant"
pn --db "$db" run "$v"
[ "$status" -eq 0 ] || fail "run variant: $out"
expect_contains "$out" "y  float32[2,16]" "the variant runs at its binding"
pn --db "$db" run "$base"
expect_contains "$out" "y  float32[1,16]" "the base runs at its own"
pn --db "$db" doctor --deep
[ "$status" -eq 0 ] || fail "doctor: $out"
pn --db "$db" stats --json
expect_contains "$out" '"models":3,"variants":27,' "stats counts models and variants apart"

# 4. one pattern, ten shapes: the image's first Conv (sole strategy)
pn --db "$db" ls --subgraphs --strategy sole --model "$base" --json
conv=$(echo "$out" | grep '"ops":\["Conv"\]' | head -1 | sed 's/.*"pattern":"\([0-9a-f]*\)".*/\1/')
[ -n "$conv" ] || fail "no sole Conv subgraph: $out"
pn --db "$db" ls --subgraphs --strategy sole --json
n=$(echo "$out" | grep -c "\"pattern\":\"$conv\"")
# both Convs of the image model share the pattern: 2 x 10 shapes
[ "$n" -ge 10 ] || fail "the Conv pattern has $n subgraphs, expected the 10 shapes at least"
h=$(echo "$out" | grep "\"pattern\":\"$conv\"" | head -1 | sed 's/.*"hash":"\([0-9a-f]*\)".*/\1/')
pn --db "$db" show "$h"
expect_contains "$out" " at N=" "an occurrence names its binding"

# 5. --variants
pn --db "$TEST_TMP/none" build --variants 0 $models
expect_contains "$out" "0 shape variants" "--variants 0"
expect_contains "$out" "partition: 3 models (3 new structures) cut into" "--variants 0: partition"
pn --db "$TEST_TMP/three" build --variants 3 $models
expect_contains "$out" "9 shape variants" "--variants 3"
pn --db "$TEST_TMP/bad" build --variants 10 $models
[ "$status" -eq 2 ] || fail "--variants 10 should be a usage error: $out"

# 6. determinism
pn --threads 1 --db "$TEST_TMP/t1" build $models
pn --threads 2 --db "$TEST_TMP/t2" build $fx/wide.onnx $fx/state.onnx $fx/image.onnx
for t in models candidates subgraphs occurrences; do
	mdb_dump -s "$t" "$TEST_TMP/t1" > "$TEST_TMP/a.$t" || fail "mdb_dump $t"
	mdb_dump -s "$t" "$TEST_TMP/t2" > "$TEST_TMP/b.$t" || fail "mdb_dump $t"
	cmp -s "$TEST_TMP/a.$t" "$TEST_TMP/b.$t" || fail "table $t differs between 1 thread and 2 threads, other order"
done
# 7. generalized batches
g="$TEST_TMP/gen"
pn --db "$g" build "$fx/fixed.onnx" "$fx/center.onnx"
[ "$status" -eq 0 ] || fail "build fixed-shape models: $out"
expect_contains "$out" "9 shape variants" "fixed.onnx generalized"
pn --db "$g" show "$(key_of "$g" fixed.onnx)"
expect_contains "$out" "variants   batch=2 (generalized): inference and one run" "batch 2"
expect_contains "$out" "batch=512 (generalized): inference and one run" "batch 512"
pn --db "$g" show "$(key_of "$g" center.onnx)"
expect_contains "$out" "no variants: batch not generalized: ReduceMean '#0' reduces over the batch axis" \
	"center.onnx refused"
pn --db "$g" ls --variants --json
v=$(echo "$out" | grep '"variant":4}' | sed 's/.*"key":"\([0-9a-f]*\)".*/\1/')
pn --db "$g" run "$v"
[ "$status" -eq 0 ] || fail "run the batch-16 variant: $out"
expect_contains "$out" "y  float32[16,10]" "the generalized variant runs at batch 16"
pn --db "$g" ls --subgraphs --strategy sole --json
n=$(echo "$out" | grep -c '"ops":\["Reshape"\]')
expect_eq "$n" 10 "one Reshape subgraph per batch (its constant rewritten)"
gen=0
for h in $(echo "$out" | grep '"ops":\["Reshape"\]' | sed 's/.*"hash":"\([0-9a-f]*\)".*/\1/'); do
	pn --db "$g" show "$h"
	case "$out" in *"(generalized)"*) gen=$((gen + 1)) ;; esac
done
expect_eq "$gen" 9 "the variants' Reshape occurrences name their generalized batch"
pn --db "$g" doctor --deep
[ "$status" -eq 0 ] || fail "doctor --deep on generalized variants: $out"
echo "variants: ladder, limits, grouping, --variants, determinism and generalized batches checked"
