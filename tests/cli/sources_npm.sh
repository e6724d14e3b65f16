# npm sources through the real npm client.  The test makes a package folder
# (two models, a file named .onnx that is not one, a README, and a model-zoo
# archive with a test set), packs it with `npm pack`, and publishes it in a
# small npm registry of its own (tests/tools/source_server.py on 127.0.0.1:
# the package document at /NAME, the tarball at /NAME/-/NAME-VERSION.tgz).
# passnet is pointed at that registry the way any npm user would be, with
# npm_config_registry, so `npm pack NAME@VERSION` resolves, downloads and
# checks the tarball exactly as against registry.npmjs.org; passnet then
# checks it against the manifest's integrity and reads the .tgz without
# unpacking it.  A wrong integrity and a missing package or version are
# one-line errors, recorded, while the good package lands; a second run
# fetches nothing.
. "$ROOT/tests/cli/lib.sh"
PY=${PYTHON:-/usr/bin/python3}
MK=${MKARCHIVE:-$ROOT/build/tools/mkarchive}
command -v npm >/dev/null || fail "npm is needed (make deps installs it)"

m="$TEST_TMP/models"
"$PY" "$ROOT/tests/fixtures/bad_models.py" "$m" >/dev/null
"$PY" - "$TEST_TMP/zoo" <<'EOF'
import os, sys
import numpy as np
from onnx import numpy_helper
d = os.path.join(sys.argv[1], "test_data_set_0")
os.makedirs(d)
x = np.array([[-1.0, 0.5, 2.0, -3.0]], dtype=np.float32)
for name, value in (("input_0.pb", x), ("output_0.pb", 1 / (1 + np.exp(-x)))):
    with open(os.path.join(d, name), "wb") as f:
        f.write(numpy_helper.from_array(value.astype(np.float32)).SerializeToString())
EOF

srv="$TEST_TMP/srv"
reg="$srv/registry/tiny-models"
mkdir -p "$reg/-"
# publish VERSION DIR: npm pack DIR into the registry, and list the version
# in the package document, with npm's own integrity and shasum.
publish() {
	(cd "$2" && npm pack --json --pack-destination "$reg/-" > "$TEST_TMP/pack-$1.json" 2>/dev/null) ||
		fail "npm pack of $2"
}
pkg="$TEST_TMP/pkg"
mkdir -p "$pkg/models"
cp "$m/good.onnx" "$pkg/models/relu.onnx"
cp "$m/hugedim.onnx" "$pkg/models/hugedim.onnx"
cp "$m/truncated.onnx" "$pkg/models/broken.onnx"
echo "tiny models for passnet's tests" > "$pkg/README.md"
"$MK" "$pkg/zoo.tar.gz" tar.gz "sigmoid/model.onnx=$m/good2.onnx" \
	"sigmoid/test_data_set_0/input_0.pb=$TEST_TMP/zoo/test_data_set_0/input_0.pb" \
	"sigmoid/test_data_set_0/output_0.pb=$TEST_TMP/zoo/test_data_set_0/output_0.pb"
printf '{"name":"tiny-models","version":"1.0.0","license":"MIT"}\n' > "$pkg/package.json"
publish 1.0.0 "$pkg"
# 1.0.1 exists too; the manifest will claim another integrity for it.
printf '{"name":"tiny-models","version":"1.0.1","license":"MIT"}\n' > "$pkg/package.json"
publish 1.0.1 "$pkg"

log="$TEST_TMP/requests.log"
: > "$log"
start_source_server "$srv" "$log"
"$PY" - "$base" "$TEST_TMP" "$reg/index.json" <<'EOF'
import json, sys
base, tmp, out = sys.argv[1:]
versions = {}
for v in ("1.0.0", "1.0.1"):
    p = json.load(open("%s/pack-%s.json" % (tmp, v)))[0]
    versions[v] = {"name": "tiny-models", "version": v, "license": "MIT",
                   "dist": {"tarball": "%s/tiny-models/-/%s" % (base, p["filename"]),
                            "integrity": p["integrity"], "shasum": p["shasum"]}}
json.dump({"name": "tiny-models", "dist-tags": {"latest": "1.0.1"}, "versions": versions},
          open(out, "w"))
EOF
integrity() { "$PY" -c "import json,sys; print(json.load(open(sys.argv[1]))[0]['integrity'])" "$TEST_TMP/pack-$1.json"; }
i100=$(integrity 1.0.0)
i101=$(integrity 1.0.1)
# integrities no tarball here has (the cache is addressed by integrity, so
# a wrong one must not be one that is cached)
wrong() { "$PY" -c "import base64,hashlib,sys; print('sha512-' + base64.b64encode(hashlib.sha512(sys.argv[1].encode()).digest()).decode())" "$1"; }
cat > "$TEST_TMP/manifest.txt" <<EOF
tiny      npm tiny-models@1.0.0  $i100  MIT  two models, a broken one, a zoo archive
tiny-bad  npm tiny-models@1.0.1  $(wrong a) MIT  a wrong integrity
ghost     npm ghost-models@1.0.0 $(wrong b) MIT  no such package
nover     npm tiny-models@9.9.9  $(wrong c) MIT  no such version
EOF
export PASSNET_CACHE="$TEST_TMP/cache" npm_config_registry="$base/" npm_config_cache="$TEST_TMP/npm-cache"
db="$TEST_TMP/db"

pn --db "$db" extract --manifest "$TEST_TMP/manifest.txt"
[ "$status" -eq 0 ] || fail "extract exited $status: $out"
echo "$out"
expect_contains "$out" "tiny-bad: tiny-models@1.0.1: sha512 integrity mismatch: manifest says $(wrong a), fetched file is $i101" "wrong integrity"
expect_contains "$out" "ghost: ghost-models@1.0.0: package not found: npm E404" "missing package"
expect_contains "$out" "nover: tiny-models@9.9.9: package not found: npm ETARGET: No matching version found for tiny-models@9.9.9" "missing version"
expect_contains "$out" "tiny: tiny-models-1.0.0.tgz!package/models/broken.onnx: not a valid ONNX protobuf" "a member named .onnx that is not ONNX"
expect_contains "$out" "tiny: tiny-models-1.0.0.tgz!package/models/hugedim.onnx: value 'h' has dim" "a bad model inside the package"
for s in tiny-bad ghost nover; do
	expect_eq "$(echo "$out" | grep -c "error: $s: ")" 1 "one line for $s"
done
case "$out" in *README*) fail "a member that is not ONNX was reported: $out" ;; esac
expect_contains "$out" "4 model files: 2 new models, 0 already stored, 0 duplicates, 2 failed" "the good models land"

pn --db "$db" ls --source tiny
expect_contains "$out" "tiny: tiny-models-1.0.0.tgz!package/models/relu.onnx" "a model of the package"
expect_contains "$out" "tiny: tiny-models-1.0.0.tgz!package/zoo.tar.gz!sigmoid/model.onnx" "a zoo model inside the package"
key=$(echo "$out" | grep "sigmoid/model.onnx" | cut -c1-32)
pn --db "$db" show "$key"
expect_contains "$out" "test sets  1" "the zoo model's test set is read from inside the archives"
pn --db "$db" ls --status failed
for s in tiny-bad ghost nover; do
	expect_contains "$out" "failed  $s: : " "errors table holds $s"
done
expect_contains "$out" "failed  tiny: tiny-models-1.0.0.tgz!package/models/broken.onnx: " "errors table holds the broken member"
pn --db "$db" show tiny
expect_contains "$out" "kind       npm" "kind"
expect_contains "$out" "location   tiny-models@1.0.0" "location"
expect_contains "$out" "checksum   $i100" "integrity"
expect_contains "$out" "origin     $base/tiny-models/-/tiny-models-1.0.0.tgz" "where npm fetched it from"
expect_contains "$out" "licence    MIT" "licence"
[ -f "$PASSNET_CACHE/sha512/$(printf '%s' "${i100#sha512-}" | base64 -d | od -An -tx1 -v | tr -d ' \n')" ] ||
	fail "the tarball is not in the cache under its SHA-512"

# A second run asks the registry for nothing it has cached.
tarballs=$(grep -c "^GET /tiny-models/-/tiny-models-1.0.0.tgz\$" "$log")
expect_eq "$tarballs" 1 "the first run fetched the tarball once"
mdb_dump -a "$db" > "$TEST_TMP/dump1"
pn --db "$db" extract --manifest "$TEST_TMP/manifest.txt"
expect_contains "$out" " 0 new models" "second run stores nothing new"
expect_eq "$(grep -c "^GET /tiny-models/-/tiny-models-1.0.0.tgz\$" "$log")" 1 "the second run did not fetch the tarball"
mdb_dump -a "$db" > "$TEST_TMP/dump2"
cmp -s "$TEST_TMP/dump1" "$TEST_TMP/dump2" || fail "the second run changed the store"
pn fetch --manifest "$TEST_TMP/manifest.txt" --offline
expect_contains "$out" "tiny: cached" "offline: the package is cached"
expect_contains "$out" "ghost: missing: not in the cache (offline): sha512/" "offline names what is missing"
echo "sources_npm: npm pack through a registry, integrity, missing package and version, cache"
