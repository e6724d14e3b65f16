# deb sources through the real apt-get.  The test builds a .deb with
# dpkg-deb (a real ar archive holding data.tar.xz), puts it in a local apt
# repository (a folder with a Packages file from dpkg-scanpackages) and
# points apt at that repository alone through APT_CONFIG: its own sources
# list, lists, cache and an empty dpkg status, so nothing of the machine's
# apt setup is read or changed.  `apt-get download NAME=VERSION` then works
# as against Debian's archive.  The same .deb is also read as a local
# archive source.  A wrong checksum, a missing package and a missing version
# are one-line errors, recorded; a second run fetches nothing (apt-get is
# reached through a wrapper that logs every call).
. "$ROOT/tests/cli/lib.sh"
PY=${PYTHON:-/usr/bin/python3}
MK=${MKARCHIVE:-$ROOT/build/tools/mkarchive}
for tool in dpkg-deb dpkg-scanpackages apt-get; do
	command -v $tool >/dev/null || fail "$tool is needed (make deps installs dpkg-dev)"
done

m="$TEST_TMP/models"
"$PY" "$ROOT/tests/fixtures/bad_models.py" "$m" >/dev/null
pkg="$TEST_TMP/pkg"
mkdir -p "$pkg/DEBIAN" "$pkg/usr/share/tiny-models/zoo" "$pkg/usr/share/doc/tiny-models"
cat > "$pkg/DEBIAN/control" <<EOF
Package: tiny-models
Version: 1.0-1
Architecture: all
Maintainer: passnet tests <tests@localhost>
Description: tiny ONNX models for passnet's tests
EOF
cp "$m/good.onnx" "$pkg/usr/share/tiny-models/relu.onnx"
cp "$m/truncated.onnx" "$pkg/usr/share/tiny-models/broken.onnx"
"$MK" "$pkg/usr/share/tiny-models/zoo/sigmoid.tar.gz" tar.gz "sigmoid/model.onnx=$m/good2.onnx"
echo "not a model" > "$pkg/usr/share/doc/tiny-models/README"
repo="$TEST_TMP/repo"
mkdir -p "$repo"
deb="$repo/tiny-models_1.0-1_all.deb"
dpkg-deb --root-owner-group -Zxz --build "$pkg" "$deb" >/dev/null
# A second package, for the wrong checksum.
sed -i 's/^Package: tiny-models/Package: other-models/' "$pkg/DEBIAN/control"
dpkg-deb --root-owner-group -Zxz --build "$pkg" "$repo/other-models_1.0-1_all.deb" >/dev/null
expect_eq "$(ar t "$deb" | tr '\n' ' ')" "debian-binary control.tar.xz data.tar.xz " "the .deb is ar + data.tar.xz"
(cd "$repo" && dpkg-scanpackages . /dev/null > Packages 2>/dev/null)
mkdir -p "$TEST_TMP/local"
cp "$deb" "$TEST_TMP/local/"

apt="$TEST_TMP/apt"
mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$apt/sources.list.d"
: > "$apt/status"
echo "deb [trusted=yes] file:$repo ./" > "$apt/sources.list"
cat > "$apt/apt.conf" <<EOF
Dir::Etc::SourceList "$apt/sources.list";
Dir::Etc::SourceParts "$apt/sources.list.d";
Dir::State::Lists "$apt/lists";
Dir::Cache "$apt/cache";
Dir::State::status "$apt/status";
APT::Sandbox::User "root";
EOF
export APT_CONFIG="$apt/apt.conf"
real_apt_get=$(command -v apt-get)
mkdir -p "$TEST_TMP/bin"
calls="$TEST_TMP/apt-get-calls.log"
: > "$calls"
cat > "$TEST_TMP/bin/apt-get" <<EOF
#!/bin/sh
echo "\$*" >> "$calls"
exec "$real_apt_get" "\$@"
EOF
chmod +x "$TEST_TMP/bin/apt-get"
PATH="$TEST_TMP/bin:$PATH"
apt-get -q update > "$TEST_TMP/apt-update.log" 2>&1 || fail "apt-get update of the local repository: $(cat "$TEST_TMP/apt-update.log")"

sha() { sha256sum "$1" | cut -c1-64; }
other() { printf '%s' "$1" | sha256sum | cut -c1-64; }
cat > "$TEST_TMP/manifest.txt" <<EOF
tinydeb    deb     tiny-models=1.0-1         $(sha "$deb")    MIT from the local repository
tinydeb-file archive $TEST_TMP/local/tiny-models_1.0-1_all.deb $(sha "$deb")    MIT the same .deb, read from disk
wrongdeb   deb     other-models=1.0-1        $(other a)        MIT a wrong checksum
nodeb      deb     no-such-package=1.0       $(other b)        MIT no such package
novers     deb     tiny-models=9.9           $(other c)        MIT no such version
EOF
export PASSNET_CACHE="$TEST_TMP/cache"
db="$TEST_TMP/db"

pn --db "$db" extract --manifest "$TEST_TMP/manifest.txt"
[ "$status" -eq 0 ] || fail "extract exited $status: $out"
echo "$out"
expect_contains "$out" "wrongdeb: other-models=1.0-1: sha256 mismatch: manifest says $(other a), fetched file is $(sha "$repo/other-models_1.0-1_all.deb")" "wrong checksum"
expect_contains "$out" "nodeb: no-such-package=1.0: package not found: apt: Unable to locate package no-such-package" "missing package"
expect_contains "$out" "novers: tiny-models=9.9: package not found: apt: Version '9.9' for 'tiny-models' was not found" "missing version"
expect_contains "$out" "tinydeb: tiny-models_1.0-1.deb!data.tar.xz!usr/share/tiny-models/broken.onnx: not a valid ONNX protobuf" "a broken model inside the .deb"
for s in wrongdeb nodeb novers; do
	expect_eq "$(echo "$out" | grep -c "error: $s: ")" 1 "one line for $s"
done
case "$out" in *README*) fail "a member that is not ONNX was reported: $out" ;; esac

pn --db "$db" ls --source tinydeb
expect_contains "$out" "tinydeb: tiny-models_1.0-1.deb!data.tar.xz!usr/share/tiny-models/relu.onnx" "a model inside the .deb"
key=$(echo "$out" | grep "sigmoid/model.onnx" | cut -c1-32)
[ -n "$key" ] || fail "the zoo model inside the .deb is not stored: $out"
pn --db "$db" show "$key"
expect_contains "$out" "found at   tinydeb-file: tiny-models_1.0-1_all.deb!data.tar.xz!usr/share/tiny-models/zoo/sigmoid.tar.gz!sigmoid/model.onnx" "the .deb read as a local archive"
pn --db "$db" show tinydeb
expect_contains "$out" "kind       deb" "kind"
expect_contains "$out" "location   tiny-models=1.0-1" "location"
expect_contains "$out" "checksum   $(sha "$deb")" "checksum"
expect_contains "$out" "origin     file:$repo/./tiny-models_1.0-1_all.deb" "where apt fetched it from"
expect_contains "$out" "models     2 stored, 1 failed, of 3 model files" "what the scan found"
pn --db "$db" ls --status failed
for s in wrongdeb nodeb novers; do
	expect_contains "$out" "failed  $s: : " "errors table holds $s"
done
[ -f "$PASSNET_CACHE/sha256/$(sha "$deb")" ] || fail "the .deb is not in the cache under its SHA-256"

# A second run does not call apt-get for what it has.
expect_eq "$(grep -c "^-q download .*tiny-models=1.0-1\$" "$calls")" 2 "first run: --print-uris and download"
mdb_dump -a "$db" > "$TEST_TMP/dump1"
pn --db "$db" extract --manifest "$TEST_TMP/manifest.txt"
expect_contains "$out" " 0 new models" "second run stores nothing new"
expect_eq "$(grep -c "tiny-models=1.0-1\$" "$calls")" 2 "the second run did not fetch tinydeb"
mdb_dump -a "$db" > "$TEST_TMP/dump2"
cmp -s "$TEST_TMP/dump1" "$TEST_TMP/dump2" || fail "the second run changed the store"
pn fetch --manifest "$TEST_TMP/manifest.txt"
expect_contains "$out" "tinydeb: cached" "fetch: cached"
expect_contains "$out" "nodeb: failed: package not found" "fetch: failed"
echo "sources_deb: apt-get download from a local repository, the .deb read nested, errors, cache"
