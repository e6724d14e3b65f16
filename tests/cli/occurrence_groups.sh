# An occurrence lists the places of one (structure, strategy) with its hash
# (schemas/passnet.proto), so a model that repeats an op stores one value for
# the repeats, split only where a dupsort value's 511 bytes end:
#  1. a chain of 600 Relu and 1 Sigmoid, cut with sole: 601 candidates, two
#     subgraphs, and the Relu's 600 places in as few values as 511 bytes
#     allow (more than one, fewer than 10), each listing its candidates in
#     ascending order;
#  2. `show` lists the 600 places, `stats` counts 601 hashed candidates,
#     `ls --subgraphs` 600 occurrences, and `doctor` finds nothing wrong;
#  3. a second model of the same structure (renamed values) doubles the
#     places every query counts, and adds no occurrence value.
. "$ROOT/tests/cli/lib.sh"
src="$TEST_TMP/src"
"$PY" - "$src" <<'PYEOF' || fail "model maker"
import os, sys
import onnx
from onnx import TensorProto, helper

def save(name, prefix):
    nodes, last = [], "x"
    for i in range(600):
        nodes.append(helper.make_node("Relu", [last], [f"{prefix}{i}"]))
        last = f"{prefix}{i}"
    nodes.append(helper.make_node("Sigmoid", [last], ["y"]))
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8])
    m = helper.make_model(helper.make_graph(nodes, name, [x], [y]),
                          opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(m)
    os.makedirs(os.path.join(sys.argv[1], name), exist_ok=True)
    onnx.save(m, os.path.join(sys.argv[1], name, "model.onnx"))

save("chain", "r")
PYEOF
db="$TEST_TMP/db"
pn --db "$db" build --strategy sole --variants 0 --no-weight-check "$src"
[ "$status" -eq 0 ] || fail "build: $out"
expect_contains "$out" "cut into 601 candidates" "the chain's candidates"

# --- 1: the Relu's places in few values, each ascending ------------------------
relu=$(pn --db "$db" ls --subgraphs && echo "$out" | awk '$NF == "Relu" { print $1 }')
[ -n "$relu" ] || fail "no Relu subgraph in: $out"
values=$(mdb_dump -s occurrences "$db" | awk '/^HEADER=END/ { b = 1; next } b && !/^DATA=END/' |
	awk 'NR % 2 == 1 { k = $1 } NR % 2 == 0 && k ~ /^'"$relu"'/ { n++ } END { print n + 0 }')
[ "$values" -gt 1 ] && [ "$values" -lt 10 ] ||
	fail "the Relu's 600 places are in $values occurrence values (want 2..9)"
"$PY" - "$db" "$relu" <<'PYEOF' || fail "occurrence values"
import sys, lmdb
env = lmdb.open(sys.argv[1], readonly=True, lock=False, max_dbs=64)
occ = env.open_db(b"occurrences", dupsort=True, create=False)
def varint(b, i):
    v = s = 0
    while True:
        c = b[i]; i += 1; v |= (c & 0x7f) << s; s += 7
        if c < 0x80:
            return v, i
seen = []
with env.begin() as t:
    c = t.cursor(occ)
    assert c.set_key(bytes.fromhex(sys.argv[2]))
    for v in c.iternext_dup():
        assert len(v) <= 511, len(v)
        i, cands = 0, []
        while i < len(v):
            tag, i = varint(v, i)
            if tag & 7 != 2:
                _, i = varint(v, i)
                continue
            n, i = varint(v, i)
            end = i + n
            while tag >> 3 == 6 and i < end:   # candidates, packed
                x, i = varint(v, i)
                cands.append(x)
            i = end
        assert cands and cands == sorted(cands), cands[:5]
        seen += cands
assert len(seen) == 600 and len(set(seen)) == 600, len(seen)
print("%d places in the values, each ascending" % len(seen))
PYEOF
echo "1. the Relu's 600 places in $values occurrence values"

# --- 2: the queries count every place -------------------------------------------
pn --db "$db" show "$relu"
[ "$(echo "$out" | grep -c 'found in')" -eq 600 ] || fail "show lists $(echo "$out" | grep -c 'found in') places"
pn --db "$db" stats
expect_contains "$out" "candidates  601 hashed" "stats' candidates"
pn --db "$db" --json ls --subgraphs
echo "$out" | grep "\"$relu\"" | grep -q '"occurrences":600' || fail "ls --subgraphs: $out"
pn --db "$db" doctor --deep
[ "$status" -eq 0 ] || fail "doctor: $out"
echo "2. show, stats, ls and doctor see 600 places"

# --- 3: a second model of the structure doubles the places, not the values -------
before=$(mdb_stat -s occurrences "$db" | sed -n 's/^  Entries: //p')
"$PY" - "$src" <<'PYEOF' || fail "renamed copy"
import os, sys, onnx
m = onnx.load(os.path.join(sys.argv[1], "chain", "model.onnx"))
ren = {}
for n in m.graph.node:
    n.output[0] = ren.setdefault(n.output[0], "t" + n.output[0] if n.output[0] != "y" else "y")
    n.input[0] = ren.get(n.input[0], n.input[0])
m.graph.name = "copy"
os.makedirs(os.path.join(sys.argv[1], "copy"), exist_ok=True)
onnx.save(m, os.path.join(sys.argv[1], "copy", "model.onnx"))
PYEOF
pn --db "$db" build --strategy sole --variants 0 --no-weight-check "$src"
[ "$status" -eq 0 ] || fail "second build: $out"
after=$(mdb_stat -s occurrences "$db" | sed -n 's/^  Entries: //p')
expect_eq "$after" "$before" "occurrence values after the copy"
pn --db "$db" stats
expect_contains "$out" "candidates  1202 hashed" "stats counts the copy's places"
pn --db "$db" show "$relu"
[ "$(echo "$out" | grep -c 'found in')" -eq 1200 ] || fail "show lists $(echo "$out" | grep -c 'found in') places after the copy"
echo "3. a renamed copy: 1200 places, still $after occurrence values"
