# Every model of the corpus that comes with a complete test set (zoo
# archives, nested ones included, and model folders) reproduces its expected
# outputs (PyTorch's in the 71-model test corpus, numpy's in the fixture corpus),
# within rtol 1e-3 / atol 1e-4, with 1 and with 2 threads; every test set
# the corpus holds is checked, and the only models conformance passes over
# (its SKIP lines) are those without a complete test set.
. "$ROOT/tests/cli/lib.sh"
need_corpus

# sets_in ARCHIVE [PATTERN]: the test sets with an input
# (test_data_set_0/input_0.pb), or the files matching PATTERN, in an
# archive, counted by unpacking it with tar / unzip, nested archives
# included.
sets_in() {
	d=$(mktemp -d "$TEST_TMP/unpack.XXXXXX")
	case "$1" in
	*.zip) unzip -q "$1" -d "$d" || fail "unzip $1" ;;
	*) tar xf "$1" -C "$d" || fail "tar xf $1" ;;
	esac
	k=$(find "$d" -path "${2:-*/test_data_set_0/input_0.pb}" | wc -l)
	for inner in $(find "$d" -type f \( -name '*.zip' -o -name '*.tar' -o -name '*.tar.gz' -o -name '*.tgz' \)); do
		k=$((k + $(sets_in "$inner" "${2:-}")))
	done
	rm -rf "$d"
	echo "$k"
}
want=$(ls "$CORPUS"/models/*/test_data_set_0/input_0.pb | wc -l)
for a in "$CORPUS"/zoo/*; do
	want=$((want + $(sets_in "$a")))
done
cases=$(ls -d "$CORPUS"/models/*/ | wc -l)
for a in "$CORPUS"/zoo/*; do
	cases=$((cases + $(sets_in "$a" '*/model.onnx')))
done
echo "the corpus holds $want complete test sets among $cases models"
[ "$want" -ge 10 ] || fail "only $want test sets in $CORPUS"

for t in 1 2; do
	pn -j "$t" conformance --rtol 1e-3 --atol 1e-4 "$CORPUS/zoo" "$CORPUS/models"
	echo "$out" | tail -n 12
	[ "$status" -eq 0 ] || fail "a corpus model does not reproduce its outputs with $t threads"
	expect_contains "$out" "PASS zoo/squeezenet1_1.tar.gz!squeezenet1_1" "zoo archive model ran"
	expect_contains "$out" "PASS zoo/nested-bundle.tar!gpt2_tiny.zip!gpt2_tiny" "nested archive model ran"
	expect_contains "$out" "$want passed, 0 failed" "every test set checked"
	n=$(echo "$out" | grep -c "^PASS")
	expect_eq "$n" "$want" "PASS lines with $t threads"
	# every model is checked or, lacking a complete test set, passed over
	over=$(echo "$out" | grep -c '^SKIP' || true)
	expect_eq "$((n + over))" "$cases" "models checked or passed over with $t threads"
	other=$(echo "$out" | grep '^SKIP' | grep -v ' no test_data_set_N folder$' |
		grep -v ' test_data_set_[0-9]* has [0-9]* of the [0-9]* inputs$' || true)
	[ -z "$other" ] || fail "passed over for another reason than missing test data: $other"
done
