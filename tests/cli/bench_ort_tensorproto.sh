# bench/ort/tensorproto.js, the TensorProto reader bench/ort/time.js feeds
# ONNX Runtime with and checks its outputs against, reads backend-test .pb
# files as onnx's numpy_helper does: one file of each element type and
# encoding (raw_data or the typed *_data fields) found in the ONNX backend
# tests, compared on dims, type and every value.
. "$ROOT/tests/cli/lib.sh"
PY=${PYTHON:-/usr/bin/python3}
command -v node >/dev/null || fail "node is not installed (make deps installs it)"
[ -d "$TESTDATA/node" ] || fail "no ONNX backend tests at $TESTDATA (make deps installs libonnx-testdata)"
"$PY" - "$TESTDATA/node" > "$TEST_TMP/expected" <<'PYEOF'
import glob, json, math, sys
import onnx
from onnx import numpy_helper
seen = {}
for f in sorted(glob.glob(sys.argv[1] + "/*/test_data_set_0/*.pb")):
    t = onnx.TensorProto()
    try:
        t.ParseFromString(open(f, "rb").read())
    except Exception:
        continue
    if not t.data_type or t.data_type in (8, 14, 15, 16) or t.data_location:
        continue
    key = (t.data_type, bool(t.raw_data))
    if key in seen:
        continue
    try:
        a = numpy_helper.to_array(t)
    except Exception:
        continue
    vals = [None if isinstance(v, float) and math.isnan(v) else v for v in a.astype("float64").ravel().tolist()]
    seen[key] = True
    print(json.dumps({"file": f, "dims": list(t.dims), "type": t.data_type, "values": vals}))
PYEOF
n=$(wc -l < "$TEST_TMP/expected")
[ "$n" -ge 8 ] || fail "only $n kinds of tensor files found"
node - "$ROOT/bench/ort/tensorproto.js" "$TEST_TMP/expected" <<'JSEOF'
const fs = require('fs');
const { readTensor, halfToNumber } = require(process.argv[2]);
const ORT = { 1: 'float32', 2: 'uint8', 3: 'int8', 4: 'uint16', 5: 'int16', 6: 'int32', 7: 'int64',
  9: 'bool', 10: 'float16', 11: 'float64', 12: 'uint32', 13: 'uint64' };
let bad = 0;
for (const line of fs.readFileSync(process.argv[3], 'utf8').trim().split('\n')) {
  const want = JSON.parse(line);
  const t = readTensor(fs.readFileSync(want.file));
  const got = t.type === 'float16' ? Array.from(t.data, halfToNumber) : Array.from(t.data, Number);
  const same = t.type === ORT[want.type] && JSON.stringify(t.dims) === JSON.stringify(want.dims) &&
    got.length === want.values.length &&
    got.every((v, i) => (want.values[i] === null ? Number.isNaN(v) : v === want.values[i] ||
      Math.abs(v - want.values[i]) <= 1e-12 * Math.abs(want.values[i])));
  console.log(`${same ? 'ok ' : 'BAD'} ${t.type} [${t.dims}] ${want.file}`);
  if (!same) bad++;
}
process.exit(bad ? 1 : 0);
JSEOF
