# Every model of ../shared/corpus that comes with a complete test set (zoo
# archives and model folders) reproduces the outputs PyTorch computed, within
# rtol 1e-3 / atol 1e-4, with 1 and with 2 threads.
. "$ROOT/tests/cli/lib.sh"
need_shared
for t in 1 2; do
	pn -j "$t" conformance --rtol 1e-3 --atol 1e-4 "$SHARED/zoo" "$SHARED/models"
	echo "$out" | grep -v "^SKIP" | tail -n 12
	[ "$status" -eq 0 ] || fail "a corpus model does not reproduce its outputs with $t threads"
	expect_contains "$out" "PASS zoo/squeezenet1_1.tar.gz!squeezenet1_1" "zoo archive model ran"
	expect_contains "$out" "PASS zoo/nested-bundle.tar!gpt2_tiny.zip!gpt2_tiny" "nested archive model ran"
	n=$(echo "$out" | grep -c "^PASS")
	[ "$n" -ge 20 ] || fail "only $n corpus models were checked"
done
