# Bad input never stops a run: every broken file gets a one-line error naming
# it and its problem, is recorded in the errors table, and every good model
# in the same run is stored.
. "$ROOT/tests/cli/lib.sh"
PY=${PYTHON:-/usr/bin/python3}
MK=${MKARCHIVE:-$ROOT/build/tools/mkarchive}
d="$TEST_TMP/src"
"$PY" "$ROOT/tests/fixtures/bad_models.py" "$d"

# Archives made with libarchive: a hostile member name, a corrupt stream,
# a gzip bomb and 20 levels of nesting, each next to a good model.
a="$TEST_TMP/arch"
mkdir -p "$a"
"$MK" "$a/dotdot.tar" tar "../x.onnx=$d/good.onnx" "/abs.onnx=$d/good.onnx" \
	"inner/good.onnx=$d/good.onnx"
"$MK" "$TEST_TMP/ok.tar.gz" tar.gz "m/model.onnx=$d/good2.onnx" "m/pad.bin=$d/random.onnx"
size=$(stat -c %s "$TEST_TMP/ok.tar.gz")
head -c $((size / 2)) "$TEST_TMP/ok.tar.gz" > "$a/corrupt.tar.gz"
"$MK" "$a/bomb.tar.gz" tar.gz "bomb/model.onnx=@zeros:700000000"
cp "$d/good2.onnx" "$TEST_TMP/level.onnx"
"$MK" "$TEST_TMP/n1.tar" tar "deep.onnx=$d/good2.onnx"
i=1
while [ $i -lt 20 ]; do
	"$MK" "$TEST_TMP/n$((i + 1)).tar" tar "n$i.tar=$TEST_TMP/n$i.tar" "level$i.onnx=$d/good.onnx"
	i=$((i + 1))
done
cp "$TEST_TMP/n20.tar" "$a/nest20.tar"

db="$TEST_TMP/db"
pn --db "$db" extract "$d" "$a"
[ "$status" -eq 0 ] || fail "extract exited $status: $out"
echo "$out"

# One line per problem, naming the file and the problem.
expect_contains "$out" "truncated.onnx: not a valid ONNX protobuf" "truncated file"
expect_contains "$out" "random.onnx: " "random bytes"
expect_contains "$out" "tensor.onnx: " "protobuf that is no model"
expect_contains "$out" "cycle.onnx: graph 'g' has a cycle" "cycle"
expect_contains "$out" "undefined.onnx: node '#0' (Add) reads undefined value 'ghost'" "undefined value"
expect_contains "$out" "duplicate.onnx: value 'y' is defined twice" "duplicate names"
expect_contains "$out" "hugedim.onnx: value 'h' has dim 4611686018427387904" "dims of 2^62"
expect_contains "$out" "extpasswd.onnx: tensor 'w': external data location '/etc/passwd' is outside" "external /etc/passwd"
expect_contains "$out" "dotdot.tar!../x.onnx" "archive member ../x.onnx"
expect_contains "$out" "corrupt.tar.gz" "corrupt tar.gz"
expect_contains "$out" "bomb.tar.gz" "gzip bomb"
expect_contains "$out" "nesting deeper than" "20 nested archives"

# The good models around them are stored: good.onnx's bytes were found at
# many places (the least one names the model), good2.onnx's at others.
pn --db "$db" ls
expect_contains "$out" "good2.onnx" "second good model"
expect_contains "$out" "dotdot.tar!inner/good.onnx" "good member of the hostile archive"
key=$(echo "$out" | grep "dotdot.tar!inner/good.onnx" | cut -c1-32)
pn --db "$db" show "$key"
expect_contains "$out" "src: good.onnx" "good model next to the bad ones"
expect_contains "$out" "nest20.tar!level19.onnx" "shallowest model of the nested archives"
expect_contains "$out" "n13.tar!level12.onnx" "deepest model within the nesting limit"

# Every bad file is recorded in errors.
pn --db "$db" ls --status failed
for f in truncated random tensor cycle undefined duplicate hugedim extpasswd; do
	expect_contains "$out" "$f.onnx" "errors table holds $f.onnx"
done
# mixedtypes.onnx decodes (stored), but its Add's inputs disagree in type:
# inference refuses it, one line naming the node
pn --db "$db" partition
expect_contains "$out" "node '#0' (Add): input 1 is float32, the first float16: the types must agree" "Add of float16 and float32"
# hugehidden.onnx: a GRU of hidden_size 2^63-1 is stored (doctor below: its
# record decodes again), its inference refused
expect_contains "$out" "node '#0' (GRU): output 0 would have dim 9223372036854775807 (limit 2^40)" "GRU of hidden_size 2^63-1"
pn --db "$db" stats
expect_contains "$out" "errors by kind:" "stats reports errors by kind"

pn --db "$db" doctor
[ "$status" -eq 0 ] || fail "doctor found problems: $out"

# A second run is a no-op.
pn --db "$db" extract "$d" "$a"
expect_contains "$out" " 0 new models" "second run stores nothing new"
