"""constant_candidates.py - for every variant of an export, the candidate
made of nothing but Constant nodes holding its exported outputs (what a
candidate author who read test_data_set_0 could submit).

    python3 constant_candidates.py EXPORT_DIR OUT_DIR

writes OUT_DIR/<task>/<variant>/model.onnx (the reference's inputs and
outputs, every output a Constant of output_N.pb) and prints how many
variants it made candidates for, and how many it could not (an output
that is not a tensor, which no Constant holds).
"""
import glob
import os
import sys

import onnx
from onnx import helper

export, out = sys.argv[1], sys.argv[2]
made = skipped = 0
for model in sorted(glob.glob(os.path.join(export, "tasks", "*", "*", "model.onnx"))):
    vdir = os.path.dirname(model)
    task, var = os.path.basename(os.path.dirname(vdir)), os.path.basename(vdir)
    ref = onnx.load(model, load_external_data=False)
    nodes = []
    try:
        for k, o in enumerate(ref.graph.output):
            t = onnx.load_tensor(os.path.join(vdir, "test_data_set_0", "output_%d.pb" % k))
            nodes.append(helper.make_node("Constant", [], [o.name], value=t))
    except Exception:   # a sequence or optional output: no Constant holds it
        skipped += 1
        continue
    g = helper.make_graph(nodes, "constant", list(ref.graph.input), list(ref.graph.output))
    os.makedirs(os.path.join(out, task, var), exist_ok=True)
    m = helper.make_model(g, opset_imports=ref.opset_import, ir_version=ref.ir_version)
    onnx.save(m, os.path.join(out, task, var, "model.onnx"))
    made += 1
print(made, skipped)
