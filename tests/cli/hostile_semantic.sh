#!/bin/sh
# hostile_semantic.sh - models that decode but mean something hostile
# (tests/cli/hostile_semantic.py: extreme dims and attributes, retyped
# attributes, swapped ops, dangling inputs, cycles, twin nodes, initializers
# whose dims or type lie, unknown opsets, emptied bodies, shapes of 2^40
# elements, strings where floats go; HOSTILE_SEED, printed, default 1)
# through every stage.  hostile_inputs.sh's byte mutations mostly stop at
# decoding; these reach inference, partition, dedup, exec and export.
#   build: status 0 or 1 by itself, no signal, stderr only one-line errors,
#     every file stored or failed with a reason, doctor --deep clean;
#   exec: 0 or 1, no signal, every attempted subgraph has a profile that
#     is ok/unstable or failed with a reason;
#   run on up to 100 stored mutations: success or one error line naming it;
#   export: 0, or 1 with one line, no signal.
. "$ROOT/tests/cli/lib.sh"
need_corpus
seed=${HOSTILE_SEED:-1}
echo "hostile_semantic: mutation seed $seed (HOSTILE_SEED)"
h=$TEST_TMP/semantic
mkdir -p "$h"
models=""
for m in "$CORPUS"/models/*/model.onnx; do
	[ "$(wc -c <"$m")" -le 262144 ] && models="$models $m"
done
[ -n "$models" ] || fail "no model of 256 KiB or less in $CORPUS"
"$PY" "$ROOT/tests/cli/hostile_semantic.py" "$seed" 300 "$h/mut" $models >"$h/mutate.out" ||
	fail "hostile_semantic.py failed"
n_mut=$(ls "$h/mut" | wc -l)
expect_eq "$n_mut" 300 "mutations written"

# no_crash WHAT RC ERRFILE: the status is 0 or 1, no timeout, no signal,
# no sanitizer report
no_crash() {
	[ "$2" -ne 124 ] || fail "$1 did not finish in time"
	[ "$2" -le 1 ] || fail "$1 ended with status $2 (a signal?): $(tail -n 5 "$3")"
	if grep -a -q 'AddressSanitizer\|runtime error:\|Segmentation\|LeakSanitizer' "$3"; then
		fail "$1 reported a crash: $(grep -a -m 3 'Sanitizer\|runtime error:\|Segmentation' "$3")"
	fi
	return 0
}

# --- build: the models' own shapes (variants would multiply the work) ---
db=$TEST_TMP/db
set +e
timeout 600 "$PASSNET" --db "$db" -q build --variants 0 "$h/mut" >"$h/build.out" 2>"$h/build.err"
status=$?
set -e
no_crash build "$status" "$h/build.err"
bad_line=$(grep -a -v -m 1 '^passnet: ' "$h/build.err" || true)
[ -z "$bad_line" ] || fail "build wrote a line that is not one error line: $bad_line"
list_places "$db" "$h"
counts=$(expect_accounted "$h/stored.jsonl" "$h/failed.jsonl" "=$h/mut") ||
	fail "some mutations are neither stored nor failed with a reason"
set -- $counts
n_stored=$1
echo "hostile_semantic: $n_mut mutations: $n_stored stored, $2 failed with a reason"
[ "$n_stored" -ge $((n_mut / 3)) ] || fail "only $n_stored of $n_mut mutations stored: the test does not reach the stages"
pn --db "$db" doctor --deep
[ "$status" -eq 0 ] || fail "doctor --deep after the build: $(printf "%s\n" "$out" | head -n 5)"

# --- exec ---
set +e
timeout 600 "$PASSNET" --db "$db" -q exec --warmup 0 --trials 1 --repeats 0 --budget 120 \
	>"$h/exec.out" 2>"$h/exec.err"
status=$?
set -e
no_crash exec "$status" "$h/exec.err"
pn --db "$db" ls --subgraphs --json
[ "$status" -eq 0 ] || fail "ls --subgraphs: $out"
printf '%s\n' "$out" >"$h/subgraphs.jsonl"
profiles=$("$PY" - "$h/subgraphs.jsonl" <<'PYEOF'
import json, sys
n = ok = failed = 0
bad = []
for line in open(sys.argv[1]):
    if not line.strip():
        continue
    r = json.loads(line)
    n += 1
    p = r.get("profile")
    if p is None:
        continue    # not attempted (the budget ran out)
    if p["status"] in ("ok", "unstable"):
        ok += 1
    elif p["status"] == "failed" and (p.get("reason") or "").strip():
        failed += 1
    else:
        bad.append("%s: status %r, reason %r" % (r["hash"], p["status"], p.get("reason")))
for b in bad[:10]:
    print("profile neither ok nor failed with a reason: " + b, file=sys.stderr)
print(n, ok, failed)
sys.exit(1 if bad else 0)
PYEOF
) || fail "a profile is neither ok/unstable nor failed with a reason"
set -- $profiles
echo "hostile_semantic: $1 subgraphs: $2 profiled, $3 failed with a reason"
[ "$2" -gt 0 ] || fail "exec profiled no subgraph: $(cat "$h/exec.out" "$h/exec.err")"

# --- run on the stored mutations ---
runs=0
run_failed=0
for f in $(awk -F'"path":"' '{split($2, p, "\""); print p[1]}' "$h/stored.jsonl" | sort | head -n 100); do
	file=$h/mut/$f
	set +e
	timeout 60 "$PASSNET" -q run "$file" >"$h/run.out" 2>"$h/run.err"
	rc=$?
	set -e
	[ "$rc" -ne 124 ] || fail "run $file did not finish within 60 s"
	[ "$rc" -le 2 ] || fail "run $file ended with status $rc (a signal?): $(tail -n 3 "$h/run.err")"
	runs=$((runs + 1))
	[ "$rc" -eq 0 ] && continue
	run_failed=$((run_failed + 1))
	grep -a -v -q '^passnet: ' "$h/run.err" && fail "run $file: a line that is not an error or warning line: $(cat "$h/run.err")"
	errors=$(grep -a -v '^passnet: warning: ' "$h/run.err" || true)
	[ "$(printf '%s\n' "$errors" | grep -a -c .)" -eq 1 ] || fail "run $file: expected one error line, got: $(cat "$h/run.err")"
	case $errors in *"$file"*) ;; *) fail "run $file: the error does not name the file: $errors" ;; esac
done
[ "$runs" -gt 0 ] || fail "no stored mutation was run"
echo "hostile_semantic: run on $runs stored mutations: $((runs - run_failed)) ran, $run_failed failed with one line naming the model"

# --- export ---
set +e
timeout 600 "$PASSNET" --db "$db" -q export --out "$h/export" --tasks 20 >"$h/export.out" 2>"$h/export.err"
status=$?
set -e
no_crash export "$status" "$h/export.err"
if [ "$status" -eq 1 ]; then
	[ "$(grep -a -c . "$h/export.err")" -eq 1 ] || fail "export failed without one clear line: $(cat "$h/export.err")"
fi
echo "hostile_semantic: export status $status: $(ls "$h/export" 2>/dev/null | wc -l) entries in $h/export"
