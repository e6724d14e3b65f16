# Typical blocks across the corpus (partition/typical.c: corpus blocks;
# dedup/blocks.h): a block of 4..64 ops between layer edges that one model
# holds once is a typical cut once another model holds it too.
#  1. model a alone: its block is listed, not kept (no typical subgraph);
#  2. model b, another source with the same block after other ops, its
#     values renamed and its branches listed the other way: the block is a
#     typical subgraph of both, a's included (an old model gains the cut);
#     model c's block of 4 single ops, held by no other model, is not;
#     nor is model d's, though its 3 shape variants hold it alike (a
#     variant stands for its base);
#     e and f, a 70-op stretch under one skip in each: its pieces are;
#  3. every typical pattern occurs at least twice;
#  4. the same store (mdb_dump, less sources and meta) from: the sources one
#     by one, all at once in the other order on 1 thread, with -j2,
#     partition then dedup apart, and two shard builds merged;
#  5. a run stopped after partition (blocks listed, none kept): the next
#     build keeps them, to the same store.
. "$ROOT/tests/cli/lib.sh"
"$PY" - "$TEST_TMP" "$ROOT" <<'PYEOF' || fail "model maker"
import os, sys
import numpy as np, onnx
from onnx import TensorProto, helper

sys.path.insert(0, os.path.join(sys.argv[2], "tests", "fixtures"))
from residual_block import residual_block

rng = np.random.default_rng(7)
def block(h, p, b_first):
    inits, a, b, tail, out = residual_block(rng, h, p)
    return inits, (b + a if b_first else a + b) + tail, out

def chain(ops, h, p):
    nodes = []
    for k, op in enumerate(ops):
        nodes.append(helper.make_node(op, [h], [f"{p}{k}"]))
        h = f"{p}{k}"
    return nodes, h

def save(folder, name, before, after, p, b_first=False):
    nodes, h = chain(before, "x", p + "pre")
    inits, body, h = block(h, p, b_first)
    tail, h = chain(after, h, p + "post")
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 32])
    y = helper.make_tensor_value_info(h, TensorProto.FLOAT, [1, 32])
    m = helper.make_model(helper.make_graph(nodes + body + tail, name, [x], [y], inits),
                          opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(m)
    os.makedirs(os.path.join(folder, name), exist_ok=True)
    onnx.save(m, os.path.join(folder, name, "model.onnx"))

d = sys.argv[1]
# d: a sequence averaged away, then another block (Tanh for Sigmoid): its
# shape variants (other sequence lengths) hold that block alike, and no
# other model holds it
x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, "sequence", 32])
inits, body, h = block("pooled", "d_", False)
for node in body:
    if node.op_type == "Sigmoid":
        node.op_type = "Tanh"
nodes = [helper.make_node("ReduceMean", ["x"], ["pooled"], axes=[1], keepdims=0)] + body
tail, h = chain(["Exp", "Neg", "Abs", "Sin"], h, "d_post")
y = helper.make_tensor_value_info(h, TensorProto.FLOAT, [1, 32])
m = helper.make_model(helper.make_graph(nodes + tail, "d", [x], [y], inits),
                      opset_imports=[helper.make_opsetid("", 17)])
onnx.checker.check_model(m)
os.makedirs(os.path.join(d, "src_d", "d"), exist_ok=True)
onnx.save(m, os.path.join(d, "src_d", "d", "model.onnx"))
# e, f: 70 ops under one skip (x + chain(x)), after other first ops: no
# boundary inside passes one stream, so the stretch, longer than a cut, is
# split at its narrowest boundaries (here all of them: two streams pass
# each) and the single ops joined 4 at a time are blocks
# (drawn, so that it repeats nothing: a period would be the repeats')
ladder = [str(op) for op in np.random.default_rng(3).choice(
    ["Relu", "Sigmoid", "Tanh", "Softsign", "Sin", "Cos", "Exp"], 70)]
for name, first in (("e", "Abs"), ("f", "Neg")):
    nodes, h = chain([first], "x", name + "_in")
    body, t = chain(ladder, h, name + "_l")
    nodes += body + [helper.make_node("Add", [h, t], [name + "_out"])]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 32])
    y = helper.make_tensor_value_info(name + "_out", TensorProto.FLOAT, [1, 32])
    m = helper.make_model(helper.make_graph(nodes, name, [x], [y]),
                          opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(m)
    os.makedirs(os.path.join(d, "src_e", name), exist_ok=True)
    onnx.save(m, os.path.join(d, "src_e", name, "model.onnx"))
save(d + "/src_a", "a", ["Sigmoid"], ["Tanh", "Exp", "Neg"], "a_")
save(d + "/src_b", "b", ["Relu", "Relu"], ["Sin"], "zz_other_", True)
save(d + "/src_c", "c", ["Abs"], ["Softsign", "Cos", "Tanh", "Sin"], "c_")
PYEOF
a="$TEST_TMP/src_a"
b="$TEST_TMP/src_b"
c="$TEST_TMP/src_c"
d="$TEST_TMP/src_d"

typical_of() {   # typical_of DB: "hash typical-occurrences nodes ops" lines, sorted
	"$PASSNET" --db "$1" --json ls --subgraphs --strategy typical |
		"$PY" -c 'import json, sys
for l in sys.stdin:
    o = json.loads(l)
    print(o["hash"], o["strategies"].get("typical", 0), o["nodes"], " ".join(sorted(o["ops"])))' |
		sort
}

# 1. a alone
db="$TEST_TMP/db"
pn --db "$db" build --variants 3 "$a"
[ "$status" -eq 0 ] || fail "build a: $out"
expect_contains "$out" "typical 0," "a alone: nothing typical"
[ -z "$(typical_of "$db")" ] || fail "a alone has typical subgraphs: $(typical_of "$db")"
mdb_dump -s blocks "$db" | grep -c '^ ' > "$TEST_TMP/n_blocks"
[ "$(cat "$TEST_TMP/n_blocks")" -ge 2 ] || fail "a's block is not listed in the blocks table"
echo "1. a alone: its block listed, nothing typical"

# 2. b joins: the block is typical in both
pn --db "$db" build --variants 3 "$b"
[ "$status" -eq 0 ] || fail "build b: $out"
# at batch 1 and the 3 batch sizes the variants generalize to: 4 subgraphs
expect_contains "$out" "typical 8," "b's 4 blocks and a's kept"
typical_of "$db" > "$TEST_TMP/t_ab"
[ "$(wc -l < "$TEST_TMP/t_ab")" -eq 4 ] || fail "4 typical subgraphs expected: $(cat "$TEST_TMP/t_ab")"
expect_eq "$(cut -d' ' -f2- "$TEST_TMP/t_ab" | sort -u)" "2 7 Add MatMul MatMul MatMul Mul Relu Sigmoid" \
	"the shared block at each batch size: 2 typical occurrences, 7 ops"
block_hash=$(head -n 1 "$TEST_TMP/t_ab" | cut -d' ' -f1)
pn --db "$db" show "$block_hash"
for m in a b; do
	expect_contains "$out" "$m/model.onnx  (typical" "model $m is a place of the typical block"
done
pn --db "$db" build --variants 3 "$c"
[ "$status" -eq 0 ] || fail "build c: $out"
typical_of "$db" > "$TEST_TMP/t_abc"
expect_eq "$(cut -d' ' -f1 "$TEST_TMP/t_abc")" "$(cut -d' ' -f1 "$TEST_TMP/t_ab")" \
	"c's chain of 4 is not typical"
expect_eq "$(cut -d' ' -f2 "$TEST_TMP/t_abc" | sort -u)" "3" "c's block joins a's and b's"
pn --db "$db" build --variants 3 "$d"
[ "$status" -eq 0 ] || fail "build d: $out"
expect_contains "$out" "3 shape variants" "d's variants"
typical_of "$db" > "$TEST_TMP/t_abcd"
expect_eq "$(cat "$TEST_TMP/t_abcd")" "$(cat "$TEST_TMP/t_abc")" "d's block, alike in d's variants only, is not typical"
mdb_dump -s blocks "$db" | grep -c '^ ' > "$TEST_TMP/n_blocks_d"
[ "$(cat "$TEST_TMP/n_blocks_d")" -ge "$(($(cat "$TEST_TMP/n_blocks") + 8))" ] ||
	fail "d and its variants' blocks are not listed"
echo "2. b joins: the block is typical in a and b; c adds a third place, its lone chain nothing;"
echo "   d's block, alike in d's shape variants only, nothing"

# 2b. a stretch longer than a cut, in e and f: its pieces are typical in both
pn --db "$TEST_TMP/ef" build --variants 0 "$TEST_TMP/src_e"
[ "$status" -eq 0 ] || fail "build e and f: $out"
"$PASSNET" --db "$TEST_TMP/ef" --json ls --subgraphs --strategy typical > "$TEST_TMP/ef.json"
"$PY" - "$TEST_TMP/ef.json" <<'PYEOF' || fail "e's and f's long stretch"
import json, sys
subs = [json.loads(l) for l in open(sys.argv[1])]
assert subs, "no typical subgraph in e and f"
assert all(4 <= o["nodes"] <= 64 and o["strategies"]["typical"] >= 2 for o in subs), subs
print(f"2b. e and f: {len(subs)} typical pieces of their 70-op stretch")
PYEOF

# 3. every typical pattern twice or more
"$PASSNET" --db "$db" --json ls --subgraphs --strategy typical | "$PY" -c '
import collections, json, sys
per = collections.Counter()
for l in sys.stdin:
    o = json.loads(l)
    assert 4 <= o["nodes"] <= 64, o
    per[o["pattern"]] += o["strategies"]["typical"]
once = [p for p, n in per.items() if n < 2]
assert per and not once, (per, once)' || fail "a typical pattern occurs once"
echo "3. every typical pattern occurs at least twice"

# 4. one store however it is built
strip() { awk '/^database=/{ skip = ($0 ~ /=sources$|=meta$/) } !skip' "$1"; }
same_as_steps() {   # same_as_steps DB WHAT
	dump "$1" "$TEST_TMP/x.dump"
	strip "$TEST_TMP/x.dump" > "$TEST_TMP/x.cmp"
	cmp -s "$TEST_TMP/steps.cmp" "$TEST_TMP/x.cmp" || fail "$2 differs from the sources one by one"
}
dump "$db" "$TEST_TMP/steps.dump"
strip "$TEST_TMP/steps.dump" > "$TEST_TMP/steps.cmp"
pn --db "$TEST_TMP/once" -j 1 build --variants 3 "$d" "$c" "$b" "$a"
[ "$status" -eq 0 ] || fail "build at once: $out"
same_as_steps "$TEST_TMP/once" "all at once, reversed, on 1 thread"
pn --db "$TEST_TMP/j2" -j 2 build --variants 3 "$b" "$d" "$a" "$c"
[ "$status" -eq 0 ] || fail "build -j2: $out"
same_as_steps "$TEST_TMP/j2" "-j2"
pn --db "$TEST_TMP/apart" extract --variants 3 "$a" "$c" "$d" "$b"
pn --db "$TEST_TMP/apart" partition
pn --db "$TEST_TMP/apart" dedup
[ "$status" -eq 0 ] || fail "dedup apart: $out"
same_as_steps "$TEST_TMP/apart" "partition then dedup apart"
for k in 0 1; do
	pn --db "$TEST_TMP/shard$k" build --variants 3 --shard "$k/2" "$a" "$b" "$c" "$d"
	[ "$status" -eq 0 ] || fail "shard $k: $out"
done
pn --db "$TEST_TMP/merged" merge "$TEST_TMP/shard1" "$TEST_TMP/shard0"
[ "$status" -eq 0 ] || fail "merge: $out"
same_as_steps "$TEST_TMP/merged" "two shard builds merged"
echo "4. the same store one by one, at once reversed, -j2, apart, and from shards merged"

# 5. a run that stopped after partition: the next build keeps the blocks
pn --db "$TEST_TMP/stopped" extract --variants 3 "$b" "$c" "$a" "$d"
pn --db "$TEST_TMP/stopped" partition
expect_contains "$out" "typical 0," "partition alone keeps nothing"
pn --db "$TEST_TMP/stopped" build --variants 3 "$b" "$c" "$a" "$d"
[ "$status" -eq 0 ] || fail "build after partition: $out"
same_as_steps "$TEST_TMP/stopped" "a build after a partition run"
echo "5. blocks listed by a run stopped after partition are kept by the next build"
