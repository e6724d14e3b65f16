# Nested graphs whose captured values the body alone cannot tell apart: in
# state.onnx (tests/fixtures/symbolic_models.py) the else branch compares
# sr with k8000, an initializer of the main graph read only there, and its
# inner If reads the graph input two scopes up; in the pair below a branch
# adds two graph inputs, one of which the main graph also negates.  The
# order in which an If wires its captures must come from the computation,
# not from the file: every subgraph of a store built from these models and
# from nested_branches.py's decodes into a graph that hashes back to its key
# (doctor --deep), and swapping the operands of the commutative ops inside
# the branches changes no hash.
. "$ROOT/tests/cli/lib.sh"
fx="$TEST_TMP/fx"
"$PY" "$ROOT/tests/fixtures/symbolic_models.py" "$fx" || fail "symbolic fixtures"
for variant in large small then-first; do
	"$PY" "$ROOT/tests/fixtures/nested_branches.py" "$fx/nested-$variant.onnx" $variant ||
		fail "nested fixture $variant"
done

# $1: out.onnx, $2: "ab" or "ba", the operand order of the ops in the branches
captures_pair() {
	"$PY" - "$1" "$2" <<'EOF' || fail "capture pair fixture"
import sys
import onnx
from onnx import TensorProto, helper

path, order = sys.argv[1], sys.argv[2]
ops = ["a", "b"] if order == "ab" else ["b", "a"]
t = lambda n: helper.make_tensor_value_info(n, TensorProto.FLOAT, [4])


def branch(name, op):
    return helper.make_graph([helper.make_node(op, ops, [name + "_y"])], name, [], [t(name + "_y")])


nodes = [helper.make_node("If", ["c"], ["y"], then_branch=branch("sum", "Add"),
                          else_branch=branch("prod", "Mul")),
         helper.make_node("Neg", ["a"], ["na"]),
         helper.make_node("Sub", ["y", "na"], ["out"])]
inputs = [t("a"), t("b"), helper.make_tensor_value_info("c", TensorProto.BOOL, [])]
g = helper.make_graph(nodes, "pair", inputs, [t("out")])
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), path)
EOF
}
captures_pair "$fx/pair-ab.onnx" ab
captures_pair "$fx/pair-ba.onnx" ba

# The state model with both Equals' operands the other way round.
"$PY" - "$fx/state.onnx" "$fx/state-swapped.onnx" <<'EOF' || fail "swapped state fixture"
import sys
import onnx


def swap_equals(g):
    for n in g.node:
        if n.op_type == "Equal":
            n.input[0], n.input[1] = n.input[1], n.input[0]
        for a in n.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                swap_equals(a.g)


m = onnx.load(sys.argv[1])
swap_equals(m.graph)
onnx.save(m, sys.argv[2])
EOF

db="$TEST_TMP/db"
pn --db "$db" build "$fx/state.onnx" "$fx/pair-ab.onnx" "$fx/nested-large.onnx" \
	"$fx/nested-small.onnx" "$fx/nested-then-first.onnx"
[ "$status" -eq 0 ] || fail "build: $out"
pn --db "$db" doctor --deep
echo "$out"
[ "$status" -eq 0 ] || fail "doctor --deep: $out"
pn --db "$db" ls --subgraphs
n=$(printf '%s\n' "$out" | grep -c .)
[ "$n" -ge 15 ] || fail "only $n subgraphs: $out"
echo "roundtrip nested: $n subgraphs decode and hash back"

# hashes of $1 and $2 must be the same sets
same_hashes() {
	pn hash --subgraphs "$1"
	[ "$status" -eq 0 ] || fail "hash $1: $out"
	a=$(printf '%s\n' "$out" | awk '{print $1}' | sort)
	pn hash --subgraphs "$2"
	[ "$status" -eq 0 ] || fail "hash $2: $out"
	b=$(printf '%s\n' "$out" | awk '{print $1}' | sort)
	[ -n "$a" ] || fail "no subgraph hashes for $1"
	[ "$a" = "$b" ] || fail "$(basename "$1") and $(basename "$2") differ only in operand order: $a / $b"
}
same_hashes "$fx/state.onnx" "$fx/state-swapped.onnx"
same_hashes "$fx/pair-ab.onnx" "$fx/pair-ba.onnx"
echo "roundtrip nested: the operand order inside branches changes no hash"
