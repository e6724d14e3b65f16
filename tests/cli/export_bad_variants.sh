# An export goes on past variants it cannot write.  Synthetic profiles
# (build/tools/mkprofiles) call subgraphs of detection models fine that the
# real profiler would fail: their reference runs fail in export (a Reshape
# of assumed dims, say).  Each such variant is left out, counted in the
# summary line and listed by `ls --warnings --export`, a task left with none
# is dropped, and the splits list only what was written.
. "$ROOT/tests/cli/lib.sh"
need_corpus
db="$TEST_TMP/db"
pn --db "$db" build "$CORPUS/models/fasterrcnn_mobilenet_v3_large_fpn" \
	"$CORPUS/models/maskrcnn_resnet50_fpn"
[ "$status" -eq 0 ] || fail "build: $out"
"${MKPROFILES:-$ROOT/build/tools/mkprofiles}" "$db" >/dev/null || fail "mkprofiles"
pn --db "$db" export --out "$TEST_TMP/set" --tasks 200
[ "$status" -eq 0 ] || fail "export stopped: $out"
echo "$out" | tail -n 2
expect_contains "$out" "tasks dropped" "the count of dropped tasks"
expect_contains "$out" "variants left out (could not be written): passnet ls --warnings --kind variant-failed --export $TEST_TMP/set" "the count of variants that could not be written"
failed=$(echo "$out" | sed -n 's/.*; \([0-9]*\) variants left out (could not be written).*/\1/p')
pn --db "$db" ls --warnings --export "$TEST_TMP/set" --kind variant-failed
[ "$status" -eq 0 ] || fail "ls --warnings --export: $out"
expect_eq "$(printf '%s\n' "$out" | grep -c '^export  *variant-failed  *t[0-9]*-[0-9a-f]*/v[0-9]*-')" "$failed" \
	"each variant that could not be written listed, naming it"
[ -f "$TEST_TMP/set/MANIFEST.tsv" ] || fail "no MANIFEST.tsv"
listed=0
for csv in "$TEST_TMP"/set/splits/*.csv; do
	for id in $(tail -n +2 "$csv" | cut -d, -f1); do
		listed=$((listed + 1))
		d="$TEST_TMP/set/tasks/$id"
		[ -f "$d/task.json" ] || fail "$id is in $(basename "$csv") but has no task.json"
		n=$(ls -d "$d"/v*/ 2>/dev/null | wc -l)
		want=$(grep "^$id," "$csv" | cut -d, -f3)
		[ "$n" -eq "$want" ] || fail "$id: $n variant folders, the split says $want"
		for v in "$d"/v*/; do
			[ -f "$v/model.onnx" ] && [ -f "$v/test_data_set_0/output_0.pb" ] ||
				fail "$v is incomplete"
		done
	done
done
dirs=$(ls -d "$TEST_TMP"/set/tasks/*/ | wc -l)
[ "$dirs" -eq "$listed" ] || fail "$dirs task folders but $listed tasks in the splits"
/usr/bin/python3 -c "import json,glob,sys; [json.load(open(f)) for f in glob.glob(sys.argv[1] + '/tasks/*/task.json')]" \
	"$TEST_TMP/set" || fail "a task.json does not parse"
echo "$listed tasks written, every one complete"
