#!/bin/sh
# hostile_inputs.sh - hostile inputs at scale through `passnet build` and
# `passnet run`.  The inputs: every file of the fuzz corpora a fresh clone
# has or makes (tests/fuzz/mkseeds.sh's ONNX model and archive seeds, the
# regression inputs of tests/fuzz/regressions/onnx_model and archive) and
# 1,000 seeded mutations of the corpus' real models (tests/cli/
# hostile_mutate.py: bit flips, inserted and deleted bytes, truncations,
# corrupted length varints, rewritten field tags; HOSTILE_SEED, printed,
# default 1), mixed with a few intact good models, part in a folder and
# part in a .tar.gz.  One build over all of it must end by itself within the
# documented limit (README, Reliability: 600 s) with status 0 or 1, never a
# signal; every .onnx file must be stored as a model or recorded as a failed
# place with a reason; the good models must be stored under the keys a
# build of them alone gives; `doctor --deep` must be clean.  Then `passnet
# run` on up to 200 of the mutations that decoded, on the corpora's models
# that decoded, and on a backend model fed each TensorProto file of the
# fuzz corpus as its input: each run ends
# within 60 s, without a signal, and either succeeds or fails with one
# error line that names the model (after warnings, if any).
. "$ROOT/tests/cli/lib.sh"
need_corpus
seed=${HOSTILE_SEED:-1}
echo "hostile_inputs: mutation seed $seed (HOSTILE_SEED)"
h=$TEST_TMP/hostile
mkdir -p "$h/folder" "$h/packed" "$h/good" "$h/sources"

# --- the fuzz corpora ---
[ -x "$ROOT/build/tools/canon_seeds" ] || fail "no build/tools/canon_seeds (make test builds it)"
"$ROOT/tests/fuzz/mkseeds.sh" "$h/seeds" "$ROOT/build/tools/canon_seeds" >/dev/null ||
	fail "mkseeds.sh failed"
for f in "$h/seeds/onnx_model"/* "$ROOT/tests/fuzz/regressions/onnx_model"/*; do
	[ -f "$f" ] && cp "$f" "$h/folder/corpus-$(basename "$f")"
done
# archives are read whole (they hold models of their own), not accounted
# file by file below
for f in "$h/seeds/archive"/* "$ROOT/tests/fuzz/regressions/archive"/*; do
	[ -f "$f" ] && cp "$f" "$h/folder/"
done
n_corpus=$(ls "$h/folder" | grep -c '^corpus-.*\.onnx$' || true)
[ "$n_corpus" -gt 50 ] || fail "only $n_corpus ONNX files in the fuzz corpora"

# --- good models: the zoo's (weights inline, with test sets) ---
# (the three smallest archives: the 71-model test corpus has none under 256 KiB;
# only models of 256 KiB or less are mutated below, since with
# PASSNET_CORPUS a 1,000-fold copy of a large model would fill the disk)
small() { [ "$(wc -c <"$1")" -le 262144 ]; }
for a in $(ls -S -r "$CORPUS"/zoo/*.tar.gz "$CORPUS"/zoo/*.zip 2>/dev/null | head -n 3); do
	case $a in
	*.zip) unzip -q -o "$a" -d "$h/sources" ;;
	*) tar -C "$h/sources" -xzf "$a" ;;
	esac
done
good=""
for m in "$h/sources"/*/model.onnx; do
	[ -f "$m" ] || continue
	name=$(basename "$(dirname "$m")")
	cp "$m" "$h/good/good-$name.onnx"
	good="$good $name"
done
set -- $good
[ "$#" -ge 2 ] || fail "fewer than two small zoo models in $CORPUS/zoo:$good"

# --- 1,000 mutations of the real models (folder models and zoo models) ---
models=""
for m in "$CORPUS"/models/*/model.onnx "$h/sources"/*/model.onnx; do
	if small "$m"; then models="$models $m"; fi
done
[ -n "$models" ] || fail "no model of 256 KiB or less in $CORPUS"
"$PY" "$ROOT/tests/cli/hostile_mutate.py" "$seed" 1000 "$h/mut" $models >"$h/mutate.out" ||
	fail "hostile_mutate.py failed"
[ "$(ls "$h/mut" | wc -l)" -eq 1000 ] || fail "expected 1000 mutations, got $(ls "$h/mut" | wc -l)"
# m0000..m0799 and two good models in the folder; m0800..m0999 and every
# good model in the archive (a good model in both is one model, two places)
for f in "$h/mut"/*; do
	case $(basename "$f") in m08* | m09*) cp "$f" "$h/packed/" ;; *) cp "$f" "$h/folder/" ;; esac
done
cp "$h/good/good-$1.onnx" "$h/good/good-$2.onnx" "$h/folder/"
cp "$h/good"/*.onnx "$h/packed/"
(cd "$h/packed" && tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner \
	-czf "$h/hostile.tar.gz" -- *)

# --- one build over all of it ---
db=$TEST_TMP/db
set +e
timeout 600 "$PASSNET" --db "$db" -q build "$h/folder" "$h/hostile.tar.gz" >"$h/build.out" 2>"$h/build.err"
status=$?
set -e
[ "$status" -ne 124 ] || fail "build did not finish within 600 s"
[ "$status" -le 1 ] || fail "build ended with status $status (a signal?): $(tail -n 5 "$h/build.err")"
grep -q 'AddressSanitizer\|runtime error:\|Segmentation' "$h/build.err" &&
	fail "build reported a crash: $(grep -m 3 'AddressSanitizer\|runtime error:\|Segmentation' "$h/build.err")"

# on stderr -q leaves only error lines: one per problem, each starting
# "passnet: " (the summaries go to stdout)
bad_line=$(grep -v -m 1 '^passnet: ' "$h/build.err" || true)
[ -z "$bad_line" ] || fail "build wrote a line that is not one error line: $bad_line"

# ls --json: valid UTF-8 JSON whatever bytes the names held (python reads it strictly)
list_places "$db" "$h"

# every .onnx file given: failed with a reason, or stored (a file whose
# bytes another stored file has too is that model: ls lists one place)
counts=$(expect_accounted "$h/stored.jsonl" "$h/failed.jsonl" "=$h/folder" "hostile.tar.gz!=$h/packed") ||
	fail "some inputs are neither stored nor failed with a reason"
n_stored=${counts% *} n_failed=${counts#* }
echo "hostile_inputs: $((n_stored + n_failed)) files: $n_stored stored, $n_failed failed with a reason"

# the good models: stored, under the keys of a build of them alone
db_good=$TEST_TMP/db-good
pn --db "$db_good" -q build "$h/good"
[ "$status" -eq 0 ] || fail "build of the good models alone: $out"
pn --db "$db_good" ls
keys_alone=$(printf '%s\n' "$out" | awk '{print $1}' | sort)
[ "$(echo "$keys_alone" | wc -l)" -eq "$#" ] || fail "expected $# good models, got: $out"
pn --db "$db" ls
for k in $keys_alone; do
	printf '%s\n' "$out" | grep -q "^$k " || fail "good model $k is not in the hostile build's store"
done
# and as the same records (where each was found aside)
record() { grep "\"key\":\"$2\"" "$1" | sed 's/"source":"[^"]*","path":"[^"]*",//'; }
pn --db "$db_good" ls --json
printf '%s\n' "$out" >"$h/good.jsonl"
for k in $keys_alone; do
	expect_eq "$(record "$h/stored.jsonl" "$k")" "$(record "$h/good.jsonl" "$k")" "good model $k"
done

pn --db "$db" doctor --deep
[ "$status" -eq 0 ] || fail "doctor --deep after the hostile build: $out"
pn --db "$db" stats --json
[ "$status" -eq 0 ] || fail "stats --json: $out"
# a node without op_type (it decodes) once came out as "(null)"
case $out in *'(null)'*) fail "stats prints (null) for a missing op type" ;; esac
# stats counts the failed places ls lists
n_failed=$(printf '%s\n' "$out" | "$PY" -c 'import json, sys; print(json.load(sys.stdin)["failed"])')
expect_eq "$n_failed" "$(grep -c . "$h/failed.jsonl")" "stats --json failed against ls --status failed"

# --- passnet run on the mutations that decoded ---
# run_one FILE ARGS...: ends by itself within 60 s without a signal; a
# failure is one error line naming FILE
runs=0
run_failed=0
run_one() {
	file=$1
	shift
	set +e
	timeout 60 "$PASSNET" -q run "$@" "$file" >"$h/run.out" 2>"$h/run.err"
	rc=$?
	set -e
	[ "$rc" -ne 124 ] || fail "run $file did not finish within 60 s"
	[ "$rc" -le 2 ] || fail "run $file ended with status $rc (a signal?): $(tail -n 3 "$h/run.err")"
	runs=$((runs + 1))
	[ "$rc" -eq 0 ] && return 0
	run_failed=$((run_failed + 1))
	# warnings may come before it (a binding that did not run), one line each
	# -a: the names in a message are the file's bytes, not always text
	grep -a -v -q '^passnet: ' "$h/run.err" && fail "run $file: a line that is not an error or warning line: $(cat "$h/run.err")"
	errors=$(grep -a -v '^passnet: warning: ' "$h/run.err" || true)
	[ "$(printf '%s\n' "$errors" | grep -a -c .)" -eq 1 ] || fail "run $file: expected one error line, got: $(cat "$h/run.err")"
	case $errors in *"$file"*) ;; *) fail "run $file: the error does not name the file: $errors" ;; esac
}
# the mutations stored, in the folder (m...) or the archive (hostile.tar.gz!m...)
decoded=$(awk -F'"path":"' '{split($2, p, "\""); print p[1]}' "$h/stored.jsonl" |
	sed -n 's/^\(hostile\.tar\.gz!\)\{0,1\}\(m[0-9]*-.*\.onnx\)$/\2/p' | sort | head -n 200)
[ -n "$decoded" ] || fail "no mutation decoded: the mutations are all fatal, the run test tests nothing"
for f in $decoded; do
	if [ -f "$h/folder/$f" ]; then run_one "$h/folder/$f"; else run_one "$h/packed/$f"; fi
done
n_decoded=$runs
# the fuzz corpora's models that decoded (backend tests, regression inputs)
for f in $(awk -F'"path":"' '{split($2, p, "\""); print p[1]}' "$h/stored.jsonl" |
	grep '^corpus-.*\.onnx$' | sort); do
	run_one "$h/folder/$f"
done
n_corpus_runs=$((runs - n_decoded))
# the TensorProto corpus as the input of a model of one float input
relu=$h/seeds/onnx_model/test_relu.onnx
[ -f "$relu" ] || fail "no test_relu.onnx among the ONNX seeds"
for f in "$h/seeds/tensorproto"/* "$ROOT/tests/fuzz/regressions/tensorproto"/*; do
	[ -f "$f" ] || continue
	rm -rf "$h/in" && mkdir "$h/in" && cp "$f" "$h/in/input_0.pb"
	run_one "$relu" --inputs "$h/in"
done
echo "hostile_inputs: run on $n_decoded decoded mutations, $n_corpus_runs corpus models and $((runs - n_decoded - n_corpus_runs)) TensorProto inputs: $((runs - run_failed)) ran, $run_failed failed with one line naming the model"
