# Kernels parallelise over independent output elements only, so a model's
# outputs are bitwise identical for 1 and 2 threads.  Models with real
# weights and models whose weights are regenerated from metadata.
. "$ROOT/tests/cli/lib.sh"
need_corpus
for m in resnet18 mobilenet_v2 squeezenet1_1 gpt2_tiny conformer bigru_tagger swin_t \
	 quantized_resnet18 r3d_18 raft_small; do
	for t in 1 2; do
		pn -j "$t" run "$CORPUS/models/$m" --seed 7 --outputs "$TEST_TMP/$m.$t"
		[ "$status" -eq 0 ] || fail "$m with $t threads: $out"
	done
	for f in "$TEST_TMP/$m.1"/*.pb; do
		cmp -s "$f" "$TEST_TMP/$m.2/$(basename "$f")" || fail "$m: $(basename "$f") differs between 1 and 2 threads"
	done
	echo "$m: outputs identical for 1 and 2 threads"
done
