# `passnet report --out DIR` on a store of two corpus models (resnet18 also
# found in a second source whose name needs escaping) with synthetic profiles
# written by build/tools/mkprofiles: the page is self-contained, escaped and
# byte-identical across runs, and headless Chromium renders it: its DOM has
# the three plots, the tables and the headline figures, and a screenshot is
# far from blank; its corpus shape (unique subgraphs per strategy, typical
# subgraphs beside the published corpus's) is stats'.  A store without profiles gets a page that says so.
. "$ROOT/tests/cli/lib.sh"
need_corpus
MKPROFILES=${MKPROFILES:-$ROOT/build/tools/mkprofiles}
PY=${PYTHON:-/usr/bin/python3}
CHROMIUM=${CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}
[ -x "$MKPROFILES" ] || fail "no $MKPROFILES (make build/tools/mkprofiles)"
[ -n "$CHROMIUM" ] || fail "chromium is not installed (make deps installs it)"

# has FILE NEEDLE WHAT: like expect_contains, without printing a whole page
has() {
	grep -qF -- "$2" "$1" || fail "$3: expected to find '$2' in $1"
}

db="$TEST_TMP/db"
odd="$TEST_TMP/src/a<b&c'd"
mkdir -p "$odd"
cp "$CORPUS/models/resnet18/model.onnx" "$odd/model.onnx"
pn --db "$db" build "$CORPUS/models/resnet18" "$CORPUS/models/gpt2_tiny" "$odd"
[ "$status" -eq 0 ] || fail "build: $out"
models=$("$PASSNET" --db "$db" ls | wc -l)
subgraphs=$("$PASSNET" --db "$db" ls --subgraphs | wc -l)
expect_eq "$models" 2 "models (resnet18 is stored once)"

# usage
pn --db "$db" report
expect_eq "$status" 2 "report without --out"
pn --db "$db" report --out "$TEST_TMP/x" --top 0
expect_eq "$status" 1 "report --top 0"
pn --db "$TEST_TMP/none" report --out "$TEST_TMP/x"
expect_eq "$status" 1 "report on a missing store"

# before any profile
pn --db "$db" report --out "$TEST_TMP/empty"
[ "$status" -eq 0 ] || fail "report without profiles: $out"
empty="$TEST_TMP/empty/index.html"
has "$empty" 'id="no-profiles"' "page without profiles"
has "$empty" 'id="no-ort"' "the ORT section without baselines"
has "$empty" 'id="n-profiled">0<' "page without profiles"
has "$empty" "no data" "plots without profiles"

# synthetic profiles
line=$("$MKPROFILES" "$db") || fail "mkprofiles: $line"
set -- $line
[ "$1 $3 $5 $7" = "profiles failed unstable slow" ] || fail "mkprofiles said: $line"
profiled=$2 failed=$4
[ "$profiled" -ge 100 ] || fail "only $profiled synthetic profiles"
[ "$failed" -ge 1 ] || fail "no failed synthetic profile"

out_dir="$TEST_TMP/report dir"
pn --db "$db" report --out "$out_dir"
[ "$status" -eq 0 ] || fail "report: $out"
expect_contains "$out" "$profiled profiled" "report summary"
html="$out_dir/index.html"
[ -s "$html" ] || fail "no $html"
[ "$(ls -A "$out_dir")" = index.html ] || fail "stray files in $out_dir: $(ls -A "$out_dir")"

# self-contained: no script, nothing to fetch (the only URL is the SVG namespace)
for bad in '<script' 'src=' 'href=' '@import' 'url(' '<link'; do
	! grep -qF -- "$bad" "$html" || fail "the page contains '$bad'"
done
[ "$(grep -o 'https\?://[^"]*' "$html" | sort -u)" = "http://www.w3.org/2000/svg" ] ||
	fail "the page names a URL other than the SVG namespace"
# escaped: the odd source name and the synthetic build "synthetic <mkprofiles>"
has "$html" "a&lt;b&amp;c&#39;d" "escaped source name"
has "$html" "synthetic &lt;mkprofiles&gt;" "escaped executor build"
! grep -qF -e "a<b" -e "<mkprofiles" "$html" || fail "unescaped text in the page"

# deterministic: same store, same bytes (the directory name is not in the page)
pn --db "$db" report --out "$TEST_TMP/again"
cmp -s "$html" "$TEST_TMP/again/index.html" || fail "two reports of one store differ"
pn --db "$db" --json report --out "$TEST_TMP/top5" --top 5
expect_contains "$out" "\"profiled\":$profiled," "report --json"
top_rows=$(sed -n '/<table id="slow-patterns"/,/<\/table>/p' "$TEST_TMP/top5/index.html" |
	grep -c '<small>e.g.')
expect_eq "$top_rows" 5 "--top 5 rows"

# the corpus's shape: the unique subgraphs per strategy and the typical
# line are stats' figures, beside the published corpus's
"$PASSNET" --db "$db" --json stats > "$TEST_TMP/stats.json" || fail "stats --json"
"$PY" - "$TEST_TMP/stats.json" "$html" <<'PYEOF' || fail "the report's corpus shape differs from stats"
import json, re, sys
st = json.load(open(sys.argv[1]))
page = open(sys.argv[2]).read()
sec = re.search(r'<section id="shape">(.*?)</section>', page, re.S)
assert sec, "no shape section"
sec = sec.group(1)
rows = dict(re.findall(r'<tr><td>(\w+)</td><td class="n">(\d+)</td></tr>', sec))
want = {k: str(v["unique"]) for k, v in st["strategies"].items()}
assert rows == want, (rows, want)
assert int(want["typical"]) > 0, "no typical subgraph in resnet18 and gpt2_tiny"
assert f'id="typical-unique">{want["typical"]}<' in sec, sec
assert f'id="typical-models">{st["typical_models"]}<' in sec, sec
assert "22115 typical subgraphs" in sec, sec
print("shape:", rows, "typical in", st["typical_models"], "models and variants")
PYEOF

# --- rendering in headless Chromium ------------------------------------------
chrome() {
	profile=$(mktemp -d "$TEST_TMP/chrome.XXXXXX")
	"$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
		--disable-background-networking --disable-component-update --disable-sync \
		--user-data-dir="$profile" "$@" 2>>"$TEST_TMP/chrome.log" ||
		fail "chromium $*: $(tail -n 5 "$TEST_TMP/chrome.log")"
}
url="file://$(echo "$html" | sed 's/ /%20/g')"
chrome --dump-dom "$url" > "$TEST_TMP/dom.html"
dom="$TEST_TMP/dom.html"
for id in efficiency-histogram flag-shares time-vs-bound; do
	has "$dom" "<svg xmlns=\"http://www.w3.org/2000/svg\" id=\"$id\"" "rendered plot $id"
done
has "$dom" "id=\"n-models\">$models<" "headline models"
has "$dom" "id=\"n-subgraphs\">$subgraphs<" "headline subgraphs"
has "$dom" "id=\"n-profiled\">$profiled<" "headline profiled"
has "$dom" "id=\"n-failed\">$failed<" "headline failed"
has "$dom" "id=\"n-sources\">3<" "headline sources"
has "$dom" "a&lt;b&amp;c'd" "odd source name, as text"
# The browser kept every element: nothing was swallowed by broken markup.
for tag in '<svg' '<circle' '<rect' '<tr>' '<td' '<section'; do
	a=$(grep -o "$tag" "$html" | wc -l)
	b=$(grep -o "$tag" "$TEST_TMP/dom.html" | wc -l)
	[ "$a" -eq "$b" ] || fail "$tag: $a in the page, $b in the DOM"
done
[ "$(grep -o '<circle' "$TEST_TMP/dom.html" | wc -l)" -ge 50 ] || fail "too few scatter points"
rows=$(sed -n '/id="source-table"/,/<\/table>/p' "$TEST_TMP/dom.html" | grep -c '^<tr><td>')
expect_eq "$rows" 3 "source rows"

# A screenshot of the page against one of a page with a single line of text:
# the report has to draw far more (plots, tables) and not be one colour.
echo '<!DOCTYPE html><p>blank</p>' > "$TEST_TMP/blank.html"
chrome --screenshot="$TEST_TMP/page.png" --window-size=1400,3000 "$url"
chrome --screenshot="$TEST_TMP/blank.png" --window-size=1400,3000 "file://$TEST_TMP/blank.html"
"$PY" - "$TEST_TMP/page.png" "$TEST_TMP/blank.png" <<'EOF' || fail "the screenshot looks blank"
# Distinct scanlines of the PNG (after decompression, before unfiltering):
# a page of one colour has a handful, a page of plots and tables hundreds.
import struct, sys, zlib

def rows(path):
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", path + ": not a PNG"
    pos, idat, w, h, bpp = 8, b"", 0, 0, 0
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, colour = struct.unpack(">IIBB", body[:10])
            bpp = {2: 3, 6: 4, 0: 1, 4: 2}[colour] * depth // 8
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw = zlib.decompress(idat)
    stride = 1 + w * bpp
    assert len(raw) == stride * h, path + ": truncated"
    return w, h, len(set(raw[i * stride:(i + 1) * stride] for i in range(h)))

w, h, page = rows(sys.argv[1])
_, _, blank = rows(sys.argv[2])
print("screenshot %dx%d: %d distinct rows (blank page: %d)" % (w, h, page, blank))
sys.exit(0 if (w, h) == (1400, 3000) and page >= 500 and page >= 10 * blank else 1)
EOF
echo "report: $models models, $subgraphs subgraphs, $profiled profiled; rendered"
