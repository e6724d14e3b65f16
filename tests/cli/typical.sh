# The typical strategy (partition/typical.c): blocks of 4..64 ops a model
# repeats.
#  1. a stack of 4 identical residual blocks gives one typical subgraph of
#     the block's 7 ops, occurring 4 times; a chain of 8 different ops
#     gives none;
#  2. the same blocks after another prefix, their values renamed and the
#     file's node order changed, give the same typical subgraph;
#  3. resnet50 of the corpus has typical subgraphs, and every typical
#     pattern in the store occurs at least twice, each of 4..64 ops;
#  4. a source added later leaves the typical subgraphs already stored as
#     they were, and the store equals one built at once, in the other
#     order, on 1 thread (mdb_dump, less the sources and meta tables);
#  5. exec's plan takes typical cuts first;
#  6. two blocks reading one shared buffer, the first directly and the second
#     through an Identity (as torch exports a causal mask), are one typical
#     subgraph occurring twice, and the Identity is no op of any cut.
. "$ROOT/tests/cli/lib.sh"
need_corpus
src1="$TEST_TMP/src1"
src2="$TEST_TMP/src2"
"$PY" - "$src1" "$src2" "$ROOT" <<'PYEOF' || fail "model maker"
import os, sys
import numpy as np, onnx
from onnx import TensorProto, helper

sys.path.insert(0, os.path.join(sys.argv[3], "tests", "fixtures"))
from residual_block import residual_block

rng = np.random.default_rng(5)
def block(k, h, names):
    return residual_block(rng, h, f"{names}{k}_")

def save(folder, name, nodes, inits, out):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 32])
    y = helper.make_tensor_value_info(out, TensorProto.FLOAT, [1, 32])
    m = helper.make_model(helper.make_graph(nodes, name, [x], [y], inits),
                          opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(m)
    os.makedirs(os.path.join(folder, name), exist_ok=True)
    onnx.save(m, os.path.join(folder, name, "model.onnx"))

# stack: 4 blocks, branch a listed first
nodes, inits, h = [], [], "x"
for k in range(4):
    i, a, b, t, h = block(k, h, "s_")
    inits += i
    nodes += a + b + t
save(sys.argv[1], "stack", nodes, inits, h)

# plain: 8 different ops in a chain
ops = ["Relu", "Sigmoid", "Tanh", "Abs", "Neg", "Exp", "Softsign", "Sin"]
nodes, h = [], "x"
for k, op in enumerate(ops):
    nodes.append(helper.make_node(op, [h], [f"p{k}"]))
    h = f"p{k}"
save(sys.argv[1], "plain", nodes, [], h)

# other: a Tanh first, 3 blocks, other names, branch b listed first
nodes, inits, h = [helper.make_node("Tanh", ["x"], ["t0"])], [], "t0"
for k in range(3):
    i, a, b, t, h = block(k, h, "zz_other_")
    inits += i
    nodes += b + a + t
save(sys.argv[2], "other", nodes, inits, h)
PYEOF

typical_of() {   # typical_of DB: "hash typical-occurrences nodes" lines, sorted
	"$PASSNET" --db "$1" --json ls --subgraphs --strategy typical |
		"$PY" -c 'import json, sys
for l in sys.stdin:
    o = json.loads(l)
    print(o["hash"], o["strategies"].get("typical", 0), o["nodes"])' | sort
}

# 1. and 4. (first half): src1 alone
db="$TEST_TMP/db"
pn --db "$db" build --variants 0 "$src1"
[ "$status" -eq 0 ] || fail "build src1: $out"
expect_contains "$out" "typical 4," "the stack's 4 blocks are cut"
typical_of "$db" > "$TEST_TMP/t1"
[ "$(wc -l < "$TEST_TMP/t1")" -eq 1 ] || fail "one typical subgraph expected: $(cat "$TEST_TMP/t1")"
read -r block_hash occ nodes < "$TEST_TMP/t1"
expect_eq "$occ $nodes" "4 7" "the stack's typical subgraph: occurrences and ops"
pn --db "$db" stats
expect_contains "$out" "typical     1 repeated blocks (unique) in 1 of 2 models and shape variants, 4.0 candidates per one with any" "stats' typical line"
echo "1. stack: one typical subgraph of 7 ops, 4 occurrences; plain: none; stats says so"

# 2. the same block, renamed and reordered, after a Tanh
pn --db "$TEST_TMP/other" build --variants 0 "$src2"
[ "$status" -eq 0 ] || fail "build src2: $out"
typical_of "$TEST_TMP/other" > "$TEST_TMP/t2"
expect_eq "$(cut -d' ' -f1,2 "$TEST_TMP/t2")" "$block_hash 3" "the renamed, reordered blocks"
echo "2. renamed and reordered blocks: the same typical subgraph"

# 3. resnet50 of the corpus; every typical pattern twice or more
pn --db "$TEST_TMP/rn" build --variants 0 --no-weight-check "$CORPUS/models/resnet50"
[ "$status" -eq 0 ] || fail "build resnet50: $out"
"$PASSNET" --db "$TEST_TMP/rn" --json ls --subgraphs --strategy typical > "$TEST_TMP/rn.json"
"$PY" - "$TEST_TMP/rn.json" <<'PYEOF' || fail "resnet50's typical subgraphs"
import collections, json, sys
per_pattern = collections.Counter()
subgraphs = 0
for l in open(sys.argv[1]):
    o = json.loads(l)
    subgraphs += 1
    assert 4 <= o["nodes"] <= 64, o
    per_pattern[o["pattern"]] += o["strategies"]["typical"]
assert subgraphs > 0, "resnet50 has no typical subgraph"
once = [p for p, c in per_pattern.items() if c < 2]
assert not once, f"typical patterns occurring once: {once}"
print(f"3. resnet50: {subgraphs} typical subgraphs, {len(per_pattern)} patterns, each twice or more")
PYEOF

# 4. a source added later
pn --db "$db" build --variants 0 "$src2"
[ "$status" -eq 0 ] || fail "build src2 into db: $out"
typical_of "$db" > "$TEST_TMP/t12"
expect_eq "$(cut -d' ' -f1,2 "$TEST_TMP/t12")" "$block_hash 7" "the block after src2 joined (4 + 3)"
pn --db "$TEST_TMP/once" -j 1 build --variants 0 "$src2" "$src1"
[ "$status" -eq 0 ] || fail "build at once: $out"
strip() { awk '/^database=/{ skip = ($0 ~ /=sources$|=meta$/) } !skip' "$1"; }
dump "$db" "$TEST_TMP/db.dump"
dump "$TEST_TMP/once" "$TEST_TMP/once.dump"
strip "$TEST_TMP/db.dump" > "$TEST_TMP/db.cmp"
strip "$TEST_TMP/once.dump" > "$TEST_TMP/once.cmp"
cmp -s "$TEST_TMP/db.cmp" "$TEST_TMP/once.cmp" || fail "src1 then src2 differs from both at once, reversed, on 1 thread"
echo "4. a later source: the stored typical subgraph kept, the store equal to one build"

# 5. the exec plan: typical first
pn --db "$db" exec --plan
[ "$status" -eq 0 ] || fail "exec --plan: $out"
first=$(echo "$out" | grep -E '^[0-9a-f]{32}$' | head -1)
expect_eq "$first" "$block_hash" "the first subgraph exec would profile"
echo "5. exec profiles the typical subgraph first"

# 6. a buffer shared through an Identity
"$PY" - "$TEST_TMP/src3" "$ROOT" <<'PYEOF' || fail "model maker (shared)"
import os, sys
import numpy as np, onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.join(sys.argv[2], "tests", "fixtures"))
from residual_block import residual_block

rng = np.random.default_rng(7)
mask = numpy_helper.from_array((rng.random((1, 32)) > 0.5).astype(np.float32), "mask")
nodes, inits, h = [helper.make_node("Identity", ["mask"], ["mask_again"])], [mask], "x"
for k, m in enumerate(["mask", "mask_again"]):
    i, a, b, t, h = residual_block(rng, h, f"sh{k}_")
    inits += i
    nodes += a + b + t + [helper.make_node("Mul", [h, m], [f"sh{k}_masked"])]
    h = f"sh{k}_masked"
x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 32])
y = helper.make_tensor_value_info(h, TensorProto.FLOAT, [1, 32])
model = helper.make_model(helper.make_graph(nodes, "shared", [x], [y], inits),
                          opset_imports=[helper.make_opsetid("", 17)])
onnx.checker.check_model(model)
os.makedirs(os.path.join(sys.argv[1], "shared"), exist_ok=True)
onnx.save(model, os.path.join(sys.argv[1], "shared", "model.onnx"))
PYEOF
pn --db "$TEST_TMP/shared" build --variants 0 "$TEST_TMP/src3"
[ "$status" -eq 0 ] || fail "build src3: $out"
typical_of "$TEST_TMP/shared" > "$TEST_TMP/t3"
[ "$(wc -l < "$TEST_TMP/t3")" -eq 1 ] || fail "one typical subgraph expected of the shared-buffer blocks: $(cat "$TEST_TMP/t3")"
expect_eq "$(cut -d' ' -f2,3 "$TEST_TMP/t3")" "2 8" "the shared-buffer blocks: occurrences and ops"
pn --db "$TEST_TMP/shared" ls --subgraphs
[ "$status" -eq 0 ] || fail "ls --subgraphs: $out"
case "$out" in *Identity*) fail "an Identity of a constant is in a cut: $out" ;; esac
echo "6. blocks reading a shared buffer, once through an Identity: one typical subgraph, twice"
