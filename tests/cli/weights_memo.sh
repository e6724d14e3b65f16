# The weight check runs once for the copies it would give one result
# (extract/weight_memo.h): re-uploads of a model under other versions and
# producers, its weights in the file (compensated.onnx: a real run and a
# corrected one) or its weight file never published (noweights.onnx:
# regenerated blind), reuse the first copy's check, and the store is the
# same bytes as when each copy is checked in a run of its own, in another
# order, or on 2 threads.  Copies whose weights come from a file beside
# them are checked one by one (the file is not in the key).
. "$ROOT/tests/cli/lib.sh"
fx="$TEST_TMP/fx"
"$PY" "$ROOT/tests/cli/weights_scale_models.py" "$fx" || fail "fixture"
m="$TEST_TMP/models"
"$PY" - "$fx" "$m" <<'PYEOF' || fail "making the copies"
import os, shutil, sys
import onnx
fx, out = sys.argv[1], sys.argv[2]
for base, name in ((100, "compensated"), (200, "noweights"), (300, "external")):
    src = os.path.join(fx, ("noweights" if name == "external" else name) + ".onnx")
    model = onnx.load(src, load_external_data=False)
    for i in range(3):
        d = os.path.join(out, f"{name}{i}")
        os.makedirs(d)
        model.model_version = base + i
        model.producer_name = f"uploader{i}"
        model.doc_string = f"re-upload {i}"
        onnx.save(model, os.path.join(d, "model.onnx"))
        if name == "external":   # the weight file beside every copy
            shutil.copy(os.path.join(fx, "noweights.data"), d)
PYEOF
[ "$(ls "$m" | wc -l)" -eq 9 ] || fail "9 copies wanted in $m"

# one run, one thread: the first copy of each is checked, the next two reuse it
pn --db "$TEST_TMP/one" -j 1 build "$m"
[ "$status" -eq 0 ] || fail "build: $out"
expect_contains "$out" "9 new models" "nine models"
expect_contains "$out" "; 4 weight checks reused (the same file, less who made it, was checked this run)" \
	"the checks reused: 2 of compensated, 2 of noweights, none of the copies with a weight file"

# each copy new in a run of its own, in another order (the source fills up
# one copy a run): nothing to reuse, the same store
mv "$m" "$TEST_TMP/all"
mkdir "$m"
for d in $(ls "$TEST_TMP/all" | sort -r); do
	cp -r "$TEST_TMP/all/$d" "$m/"
	pn --db "$TEST_TMP/apart" -j 1 build "$m"
	[ "$status" -eq 0 ] || fail "build with $d: $out"
	expect_contains "$out" "1 new models" "$d: one new model"
	case $out in *"checks reused"*) fail "a run of one new model reused a check: $out" ;; esac
done
pn --db "$TEST_TMP/two" -j 2 build "$m"
[ "$status" -eq 0 ] || fail "build -j 2: $out"
mdb_dump -a "$TEST_TMP/one" > "$TEST_TMP/one.dump" || fail "mdb_dump one"
mdb_dump -a "$TEST_TMP/apart" > "$TEST_TMP/apart.dump" || fail "mdb_dump apart"
mdb_dump -a "$TEST_TMP/two" > "$TEST_TMP/two.dump" || fail "mdb_dump two"
cmp -s "$TEST_TMP/one.dump" "$TEST_TMP/apart.dump" || fail "reused checks give another store than checks apart"
cmp -s "$TEST_TMP/one.dump" "$TEST_TMP/two.dump" || fail "the store differs between 1 and 2 threads"

# and the reused check is the check: the corrected model says so on each copy
for i in 0 1 2; do
	pn --db "$TEST_TMP/one" show "$(key_of "$TEST_TMP/one" "compensated$i/model.onnx")"
	expect_contains "$out" "outputs within 10x of the real run: yes after" "compensated$i: corrected"
	pn --db "$TEST_TMP/one" show "$(key_of "$TEST_TMP/one" "noweights$i/model.onnx")"
	expect_contains "$out" "outputs finite and normal: yes" "noweights$i: the blind check"
	pn --db "$TEST_TMP/one" show "$(key_of "$TEST_TMP/one" "external$i/model.onnx")"
	expect_contains "$out" "outputs within 10x of the real run: yes" "external$i: checked with its weight file"
done
echo "weights_memo: ok"
