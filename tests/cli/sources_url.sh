# url sources, fetched with libcurl from an HTTP server this test starts on
# 127.0.0.1 (tests/tools/source_server.py, which logs every request): a
# model, an archive and a model behind a redirect land; a wrong checksum, a
# 404, a truncated body and an archive member escaping with '..' each give
# one line naming the source and are recorded, and the rest goes on.  A
# second run fetches nothing and changes nothing in the store; --offline
# works from the cache and names what is missing; a corrupted cache file is
# fetched again; a killed fetch leaves no half file under the final name;
# the order of the sources does not change the store.
. "$ROOT/tests/cli/lib.sh"
PY=${PYTHON:-/usr/bin/python3}
MK=${MKARCHIVE:-$ROOT/build/tools/mkarchive}
command -v mdb_dump >/dev/null || fail "mdb_dump (lmdb-utils) is needed"

m="$TEST_TMP/models"
"$PY" "$ROOT/tests/fixtures/bad_models.py" "$m" >/dev/null
srv="$TEST_TMP/srv"
mkdir -p "$srv/files"
cp "$m/good.onnx" "$srv/files/model.onnx"
cp "$m/good.onnx" "$srv/files/copy.onnx"
cp "$m/good2.onnx" "$srv/files/moved.onnx"
echo "not a model" > "$TEST_TMP/readme.txt"
"$MK" "$srv/files/zoo.tar.gz" tar.gz "zoo/resnet/model.onnx=$m/good2.onnx" \
	"zoo/readme.txt=$TEST_TMP/readme.txt"
"$MK" "$srv/files/escape.tar" tar "../evil.onnx=$m/good.onnx" "ok/inner.onnx=$m/good2.onnx"
"$MK" "$srv/files/cut.tar.gz" tar.gz "cut/model.onnx=$m/good.onnx" "cut/pad.bin=$m/random.onnx"

log="$TEST_TMP/requests.log"
: > "$log"
start_source_server "$srv" "$log"

sha() { sha256sum "$1" | cut -c1-64; }
zeros=0000000000000000000000000000000000000000000000000000000000000000
cat > "$TEST_TMP/manifest.txt" <<EOF
# url sources of every kind of outcome
web-model   url $base/files/model.onnx   $(sha "$srv/files/model.onnx") MIT a model
web-copy    url $base/files/copy.onnx    $(sha "$srv/files/copy.onnx") MIT the same bytes elsewhere
web-zoo     url $base/files/zoo.tar.gz   $(sha "$srv/files/zoo.tar.gz") Apache-2.0 an archive
web-moved   url $base/redirect/moved.onnx $(sha "$srv/files/moved.onnx") MIT behind a redirect
web-escape  url $base/files/escape.tar   $(sha "$srv/files/escape.tar") MIT a member escaping
bad-sum     url $base/files/copy.onnx    $zeros MIT wrong checksum
bad-404     url $base/files/nope.onnx    $(echo nope | sha256sum | cut -c1-64) MIT not there
bad-cut     url $base/truncated/cut.tar.gz $(sha "$srv/files/cut.tar.gz") MIT truncated
EOF
export PASSNET_CACHE="$TEST_TMP/cache"
db="$TEST_TMP/db"
requests() { grep -c "^GET $1\$" "$log" || true; }

pn --db "$db" extract --manifest "$TEST_TMP/manifest.txt"
[ "$status" -eq 0 ] || fail "extract exited $status: $out"
echo "$out"
expect_contains "$out" "bad-sum: $base/files/copy.onnx: sha256 mismatch: manifest says $zeros, fetched file is $(sha "$srv/files/copy.onnx")" "wrong checksum"
expect_contains "$out" "bad-404: $base/files/nope.onnx: HTTP 404" "404"
cut_size=$(stat -c %s "$srv/files/cut.tar.gz")
expect_contains "$out" "bad-cut: $base/truncated/cut.tar.gz: truncated body: Content-Length $((cut_size + 1000)), got $cut_size bytes" "truncated body"
expect_contains "$out" "web-escape: escape.tar!../evil.onnx: member name contains a '..' component, refused" "member escaping"
for s in bad-sum bad-404 bad-cut web-escape; do
	expect_eq "$(echo "$out" | grep -c "error: $s: ")" 1 "one line for $s"
done
# good.onnx's bytes from two sources, good2.onnx's from three.
expect_contains "$out" "5 model files: 2 new models, 0 already stored, 3 duplicates, 0 failed" "the good sources land"
# Nothing half-fetched is left in the cache, under its name or another.
[ ! -e "$PASSNET_CACHE/sha256/$(sha "$srv/files/cut.tar.gz")" ] || fail "a truncated download is in the cache"
[ ! -e "$PASSNET_CACHE/sha256/$zeros" ] || fail "a file with the wrong checksum is in the cache"
[ -z "$(ls -A "$PASSNET_CACHE/sha256" | grep '^\.')" ] || fail "temporary files left: $(ls -A "$PASSNET_CACHE/sha256")"

pn --db "$db" ls
expect_contains "$out" "web-copy: copy.onnx" "a model from a url"
key=$(echo "$out" | grep "web-escape: escape.tar!ok/inner.onnx" | cut -c1-32)
[ -n "$key" ] || fail "the good member of the escaping archive is not listed: $out"
pn --db "$db" show "$key"
expect_contains "$out" "found at   web-zoo: zoo.tar.gz!zoo/resnet/model.onnx" "a model inside an archive from a url"
expect_contains "$out" "found at   web-moved: moved.onnx" "the redirected model, named after the manifest's URL"
pn --db "$db" stats
expect_contains "$out" "web-model (stored)" "the same bytes from another url"
expect_contains "$out" "web-moved (stored)" "the redirected model is stored"
expect_contains "$out" "web-escape (stored)" "the good member of the escaping archive is stored"
pn --db "$db" ls --status failed
for s in bad-sum bad-404 bad-cut; do
	expect_contains "$out" "failed  $s: : " "errors table holds $s"
done
expect_contains "$out" "failed  web-escape: escape.tar!../evil.onnx: " "errors table holds the escaping member"

# Provenance: kind, location, checksum, licence and where the bytes came
# from (after the redirect).
pn --db "$db" show web-moved
expect_contains "$out" "kind       url" "kind"
expect_contains "$out" "location   $base/redirect/moved.onnx" "location"
expect_contains "$out" "checksum   $(sha "$srv/files/moved.onnx")" "checksum"
expect_contains "$out" "origin     $base/files/moved.onnx" "origin after the redirect"
expect_contains "$out" "licence    MIT" "licence"
# The same bytes, fetched once, keep each source's own origin.
pn --db "$db" show web-copy
expect_contains "$out" "origin     $base/files/copy.onnx" "origin of bytes another source fetched"
pn --db "$db" show bad-404
expect_contains "$out" "error      extract: HTTP 404" "show names the source's error"
pn --db "$db" stats
expect_contains "$out" "web-zoo  url $base/files/zoo.tar.gz  $(sha "$srv/files/zoo.tar.gz")  licence Apache-2.0  1 stored, 0 failed  from $base/files/zoo.tar.gz" "stats lists the source"
pn --db "$db" doctor
[ "$status" -eq 0 ] || fail "doctor: $out"

# A second run fetches nothing that is cached and changes nothing.
mdb_dump -a "$db" > "$TEST_TMP/dump1"
before=$(wc -l < "$log")
for p in /files/model.onnx /files/zoo.tar.gz /redirect/moved.onnx /files/moved.onnx /files/escape.tar; do
	expect_eq "$(requests $p)" 1 "first run fetched $p once"
done
pn --db "$db" extract --manifest "$TEST_TMP/manifest.txt"
expect_contains "$out" " 0 new models" "second run stores nothing new"
for p in /files/model.onnx /files/zoo.tar.gz /redirect/moved.onnx /files/moved.onnx /files/escape.tar; do
	expect_eq "$(requests $p)" 1 "second run did not fetch $p"
done
mdb_dump -a "$db" > "$TEST_TMP/dump2"
cmp -s "$TEST_TMP/dump1" "$TEST_TMP/dump2" || fail "the second run changed the store"

# fetch: one line per source.
pn fetch --manifest "$TEST_TMP/manifest.txt"
[ "$status" -eq 1 ] || fail "fetch with failing sources exited $status"
expect_contains "$out" "web-model: cached" "fetch: cached"
expect_contains "$out" "bad-404: failed: HTTP 404" "fetch: failed"
expect_eq "$(echo "$out" | wc -l)" 8 "one line per source"

# --offline: the cache only; every missing source is named, nothing is
# requested, and a fresh store gets the same models.
after=$(wc -l < "$log")
pn fetch --manifest "$TEST_TMP/manifest.txt" --offline
expect_contains "$out" "web-zoo: cached" "offline fetch: cached"
for s in bad-sum bad-404 bad-cut; do
	expect_contains "$out" "$s: missing: not in the cache (offline): sha256/" "offline fetch names $s"
done
pn --db "$TEST_TMP/db2" extract --manifest "$TEST_TMP/manifest.txt" --offline
expect_contains "$out" "5 model files: 2 new models" "offline extract from the cache"
expect_contains "$out" "bad-404: $base/files/nope.onnx: not in the cache (offline): sha256/" "offline extract names what is missing"
expect_eq "$(wc -l < "$log")" "$after" "offline runs make no request"

# A corrupted cache file is noticed and fetched again (offline, it is an
# error of its source).
cached="$PASSNET_CACHE/sha256/$(sha "$srv/files/model.onnx")"
echo "damage" >> "$cached"
pn fetch --manifest "$TEST_TMP/manifest.txt" --offline
expect_contains "$out" "web-model: failed: the cached copy sha256/" "offline: corrupt copy"
pn fetch --manifest "$TEST_TMP/manifest.txt"
expect_contains "$out" "web-model: fetched (" "corrupt copy fetched again"
expect_contains "$out" "the cached copy was corrupt" "fetch says why"
expect_eq "$(requests /files/model.onnx)" 2 "the corrupt copy was requested again"
expect_eq "$(sha "$cached")" "$(sha "$srv/files/model.onnx")" "the cache holds the right bytes again"
pn --db "$db" extract --manifest "$TEST_TMP/manifest.txt"
expect_contains "$out" " 0 new models" "after refetching, nothing new"
mdb_dump -a "$db" > "$TEST_TMP/dump3"
cmp -s "$TEST_TMP/dump1" "$TEST_TMP/dump3" || fail "refetching changed the store"
# A fetch killed half way leaves nothing under the final name, and the
# next fetch of the same bytes is not misled by what it left.
"$MK" "$srv/files/big.tar" tar "big/model.onnx=$m/good.onnx" "big/pad.onnx=@zeros:4000000"
big=$(sha "$srv/files/big.tar")
echo "big url $base/stall/big.tar $big MIT stalls half way" > "$TEST_TMP/stall.txt"
"$PASSNET" fetch --manifest "$TEST_TMP/stall.txt" > "$TEST_TMP/stall.out" 2>&1 &
fetcher=$!
i=0
until [ "$(cat "$PASSNET_CACHE"/sha256/.part-* 2>/dev/null | wc -c)" -ge 1000000 ]; do
	i=$((i + 1))
	[ $i -lt 600 ] || { kill -9 $fetcher; fail "the stalled fetch never wrote half the file"; }
	sleep 0.1
done
kill -9 $fetcher
wait $fetcher 2>/dev/null || true
[ ! -e "$PASSNET_CACHE/sha256/$big" ] || fail "a killed fetch left a file under the final name"
echo "big url $base/files/big.tar $big MIT whole" > "$TEST_TMP/whole.txt"
pn fetch --manifest "$TEST_TMP/whole.txt"
expect_contains "$out" "big: fetched (" "the next fetch gets the whole file"
expect_eq "$(sha "$PASSNET_CACHE/sha256/$big")" "$big" "the cache holds the whole file"

# The order of the sources does not matter: the manifest reversed, into
# a fresh cache and store, gives the same store.
grep -v '^#' "$TEST_TMP/manifest.txt" | tac > "$TEST_TMP/reversed.txt"
PASSNET_CACHE="$TEST_TMP/cache-rev" pn --db "$TEST_TMP/db-rev" extract --manifest "$TEST_TMP/reversed.txt"
mdb_dump -a "$TEST_TMP/db-rev" > "$TEST_TMP/dump-rev"
cmp -s "$TEST_TMP/dump1" "$TEST_TMP/dump-rev" || fail "the reversed manifest gave another store: $(diff "$TEST_TMP/dump1" "$TEST_TMP/dump-rev" | head -4)"
echo "sources_url: ok, bad checksum, 404, truncated, redirect, '..', cache, offline, corrupt cache"
