# A profile says whether its subgraph ran on denormal values: a model whose
# Mul by 1e-39 makes every value after it subnormal gives cuts whose inputs
# (drawn in the ranges the model's run showed) or outputs are denormal, and
# `passnet show` says so with the counts; a model of ordinary values says
# "no".  `stats` and the report count the profiles that did, and every profile says its
# inputs did not come from a run on real weights (the range record does not
# mark that yet).
. "$ROOT/tests/cli/lib.sh"
models="$TEST_TMP/models"
db="$TEST_TMP/db"
"$PY" - "$models" <<'PYEOF' || fail "model maker"
import os, sys
import numpy as np, onnx
from onnx import TensorProto, helper, numpy_helper

def save(name, shape, scale):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)
    inits = [numpy_helper.from_array(np.array(scale, np.float32), "scale")]
    nodes = [helper.make_node("Mul", ["x", "scale"], ["d"]),
             helper.make_node("Relu", ["d"], ["r"]),
             helper.make_node("Neg", ["r"], ["y"])]
    m = helper.make_model(helper.make_graph(nodes, name, [x], [y], inits),
                          opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(m)
    os.makedirs(os.path.join(sys.argv[1], name), exist_ok=True)
    onnx.save(m, os.path.join(sys.argv[1], name, "model.onnx"))

assert 0 < np.float32(1e-39) < np.finfo(np.float32).tiny   # subnormal, not zero
save("denormal", [8, 8], 1e-39)
save("normal", [4, 4], 2.0)
PYEOF
pn --db "$db" -q build --variants 0 "$models"
[ "$status" -eq 0 ] || fail "build: $out"
pn --db "$db" exec --warmup 1 --trials 2
[ "$status" -eq 0 ] || fail "exec: $out"

# show HASH for the cut of the given ops and element type
show_cut() {
	pn --db "$db" ls --subgraphs
	hash=$(echo "$out" | grep -E " (us|-)  $1\$" | awk '{ print $1 }' | while read -r h; do
			"$PASSNET" --db "$db" show "$h" | grep -qF "$2" && echo "$h"; done | head -n 1)
	[ -n "$hash" ] || fail "no cut '$1' on $2 in: $out"
	pn --db "$db" show "$hash"
	[ "$status" -eq 0 ] || fail "show $hash: $out"
}

# Relu then Neg, fed the model's denormal values: its inputs say so
show_cut "Relu Neg" "float32[8,8]"
expect_contains "$out" "profile    ok" "the denormal cut was measured"
echo "$out" | grep -qE '^  denormals  yes: [1-9][0-9]* in the inputs, [1-9][0-9]* in the outputs$' ||
	fail "denormal inputs and outputs not reported: $out"
expect_contains "$out" "not from a run on real weights" "input source"
# the Mul that makes them: ordinary inputs, denormal outputs
show_cut "Mul" "float32[8,8]"
echo "$out" | grep -qE '^  denormals  yes: 0 in the inputs, [1-9][0-9]* in the outputs$' ||
	fail "denormal outputs of the Mul not reported: $out"
# the same ops on ordinary values
show_cut "Relu Neg" "float32[4,4]"
expect_contains "$out" "profile    ok" "the ordinary cut was measured"
expect_contains "$out" "  denormals  no: 0 in the inputs, 0 in the outputs" "ordinary values"

# stats counts the profiles whose values were denormal: every profile of a
# [8,8] cut (the denormal model's), none of the others
pn --db "$db" ls --subgraphs
denormal=0
for h in $(echo "$out" | awk '{print $1}'); do
	s=$("$PASSNET" --db "$db" show "$h")
	case "$s" in
	*"float32[8,8]"*) echo "$s" | grep -q '^  denormals  yes' || fail "$h: $s"
		denormal=$((denormal + 1)) ;;
	*) echo "$s" | grep -q '^  denormals  no' || fail "$h: $s" ;;
	esac
done
[ "$denormal" -ge 3 ] || fail "only $denormal cuts of the denormal model"
pn --db "$db" --json stats
expect_contains "$out" "\"profile_denormal\":$denormal,\"profile_real_inputs\":0," "stats --json"
pn --db "$db" stats
expect_contains "$out" "values      $denormal profiles ran on or gave denormal values; 0 drew" "stats"
pn --db "$db" report --out "$TEST_TMP/report"
[ "$status" -eq 0 ] || fail "report: $out"
grep -qF "id=\"n-denormal\">$denormal<" "$TEST_TMP/report/index.html" ||
	fail "the report's count of profiles on denormal values is not $denormal"
echo "profile_denormal: $denormal denormal profiles reported"
