# The corpus recipe's own deb source against Debian's real archive:
# `passnet fetch` gets libonnx-testdata's .deb with apt-get download (its
# checksum pinned in data-manifest.txt), and extracting it finds exactly the
# models of the four backend-test folders the installed package puts under
# /usr/share/libonnx-testdata/data, with their test sets, read from
# data.tar.xz inside the .deb.  Needs Debian's archive, which is reachable
# wherever passnet builds (make deps installs from it): when apt-get cannot
# download, the test fails and says that is why.
. "$ROOT/tests/cli/lib.sh"
[ -d "$TESTDATA/node" ] || fail "libonnx-testdata is not installed (make deps installs it)"
export PASSNET_CACHE="$TEST_TMP/cache"
# The recipe's op-tests line, as it stands in data-manifest.txt (its other
# sources, the npm packages, have tests of their own).
m="$TEST_TMP/manifest.txt"
awk '$1 == "onnx-testdata"' "$ROOT/data-manifest.txt" >"$m"
[ "$(wc -l <"$m")" -eq 1 ] || fail "data-manifest.txt has no onnx-testdata line"

pn fetch --manifest "$m"
echo "$out"
case "$out" in
*"onnx-testdata: failed: apt-get download failed: "*)
	fail "Debian's archive is not reachable: $out" ;;
*"onnx-testdata: failed: package not found"*)
	fail "data-manifest.txt's libonnx-testdata version is not in apt's lists ($(apt-cache policy libonnx-testdata | grep Candidate)): $out" ;;
esac
[ "$status" -eq 0 ] || fail "fetch exited $status: $out"
expect_contains "$out" "onnx-testdata: fetched (" "the .deb is fetched"
pn fetch --manifest "$m"
expect_eq "$out" "onnx-testdata: cached" "a second fetch finds it in the cache"

pn --db "$TEST_TMP/deb" extract --manifest "$m"
[ "$status" -eq 0 ] || fail "extract exited $status: $out"
case "$out" in *"error:"*) fail "errors extracting the .deb: $out" ;; esac
pn --db "$TEST_TMP/dirs" extract "$TESTDATA/node" "$TESTDATA/pytorch-converted" \
	"$TESTDATA/pytorch-operator" "$TESTDATA/simple"
[ "$status" -eq 0 ] || fail "extract of the folders exited $status: $out"
pn --db "$TEST_TMP/deb" ls
echo "$out" | cut -c1-32 | sort > "$TEST_TMP/deb.keys"
pn --db "$TEST_TMP/dirs" ls
echo "$out" | cut -c1-32 | sort > "$TEST_TMP/dirs.keys"
n=$(wc -l < "$TEST_TMP/dirs.keys")
[ "$n" -gt 1000 ] || fail "only $n models in the backend-test folders"
cmp -s "$TEST_TMP/deb.keys" "$TEST_TMP/dirs.keys" ||
	fail "the .deb and the folders hold different models: $(diff "$TEST_TMP/deb.keys" "$TEST_TMP/dirs.keys" | head -5)"

pn --db "$TEST_TMP/deb" ls --source onnx-testdata
line=$(echo "$out" | grep "data/node/test_abs/model.onnx")
expect_contains "$line" "onnx-testdata: libonnx-testdata_1.12.0-2.deb!data.tar.xz!usr/share/libonnx-testdata/data/node/test_abs/model.onnx" "a model's path inside the .deb"
pn --db "$TEST_TMP/deb" show "$(echo "$line" | cut -c1-32)"
expect_contains "$out" "test sets  1" "its test set is read from inside data.tar.xz"
pn --db "$TEST_TMP/deb" show onnx-testdata
expect_contains "$out" "kind       deb" "kind"
expect_contains "$out" "location   libonnx-testdata=1.12.0-2" "location"
expect_contains "$out" "/pool/main/o/onnx/libonnx-testdata_1.12.0-2_all.deb" "origin: Debian's pool"
expect_contains "$out" "licence    Apache-2.0" "licence"
echo "sources_debian: libonnx-testdata from Debian's archive: $n models, as in the installed folders"
