#!/bin/sh
# mkseeds.sh OUT CANON_SEEDS - writes the fuzz seed corpora OUT/<harness>/
# from small real files: models and .pb files of Debian's ONNX backend
# tests (a fixed list of op families with nested graphs, sequences and
# optionals, and every 25th small node test), archives of two such models
# in every format passnet reads (built here with tar, gzip, xz, bzip2, zip
# and ar), the repo's data-manifest.txt, and the canonical bytes of the
# chosen models' subgraphs (CANON_SEEDS: build/tools/canon_seeds), task
# folders of a few backend tests packed for check_task.  The
# small hand-written seeds of tests/fuzz/seeds/ are copied in too.
# Deterministic: the same files each run.
set -eu
mkdir -p "$1"
out=$(cd "$1" && pwd)
canon_seeds=$2
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
data=${TESTDATA:-/usr/share/libonnx-testdata/data}
[ -d "$data/node" ] || { echo "mkseeds.sh: no ONNX backend tests at $data (make deps)" >&2; exit 1; }
rm -rf "${out:?}"/*
for h in onnx_model archive manifest tensorproto canon_decode json check_task torchscript; do
	mkdir -p "$out/$h"
	[ -d "$here/seeds/$h" ] && cp "$here/seeds/$h"/* "$out/$h/"
done

chosen="test_add test_conv_with_strides_padding test_matmul_2d test_gemm_default_no_bias
test_relu test_reshape_reordered_all_dims test_transpose_default test_concat_2d_axis_0
test_slice test_gather_0 test_batchnorm_example test_maxpool_2d_default
test_averagepool_2d_default test_softmax_example test_resize_upsample_scales_nearest
test_if test_if_seq test_if_opt test_loop11 test_loop13_seq test_scan_sum test_scan9_sum
test_sequence_insert_at_back test_split_to_sequence_1 test_optional_get_element
test_optional_has_element_empty test_cast_FLOAT_to_FLOAT16 test_constant
test_constantofshape_int_zeros test_range_float_type_positive_delta test_where_example
test_expand_dim_changed test_tile test_pad test_topk test_nonzero_example test_einsum_batch_matmul
test_lstm_defaults test_gru_defaults test_quantizelinear test_unique_sorted_with_axis"
every25=$(ls "$data/node" | awk 'NR % 25 == 0')
n=0
for t in $chosen $every25; do
	d="$data/node/$t"
	[ -f "$d/model.onnx" ] || continue
	[ "$(wc -c <"$d/model.onnx")" -le 8192 ] || continue
	cp "$d/model.onnx" "$out/onnx_model/$t.onnx"
	for pb in "$d"/test_data_set_0/*.pb; do
		[ -f "$pb" ] && [ "$(wc -c <"$pb")" -le 4096 ] || continue
		cp "$pb" "$out/tensorproto/$t-$(basename "$pb")"
	done
	n=$((n + 1))
done
# a few small real networks converted from PyTorch (weights included)
for d in $(ls -d "$data"/pytorch-converted/*/ | awk 'NR % 10 == 0'); do
	[ "$(wc -c <"$d/model.onnx")" -le 16384 ] || continue
	cp "$d/model.onnx" "$out/onnx_model/pytorch-$(basename "$d").onnx"
done
"$canon_seeds" "$out/canon_decode" "$out"/onnx_model/*.onnx

# archives: two models with a test set, in every format and nested
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/src/a/test_data_set_0" "$tmp/src/b"
cp "$data/node/test_add/model.onnx" "$tmp/src/a/model.onnx"
cp "$data/node/test_add/test_data_set_0/input_0.pb" "$tmp/src/a/test_data_set_0/"
cp "$data/node/test_relu/model.onnx" "$tmp/src/b/model.onnx"
find "$tmp/src" -exec touch -d @0 {} +
tarc() { tar -C "$tmp/src" --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -cf - a b; }
a=$out/archive
tarc >"$a/models.tar"
tarc | gzip -n9 >"$a/models.tar.gz"
tarc | xz -9 >"$a/models.tar.xz"
tarc | xz --format=lzma >"$a/models.tar.lzma"
tarc | bzip2 -9 >"$a/models.tar.bz2"
(cd "$tmp/src" && zip -qrX "$a/models.zip" a b)
# nested: a tar holding a zip and a tar.gz
mkdir "$tmp/nest"
cp "$a/models.zip" "$a/models.tar.gz" "$tmp/nest/"
tar -C "$tmp/nest" --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner \
	-cf "$a/nested.tar" models.zip models.tar.gz
# a Debian package: ar of debian-binary, control.tar.xz, data.tar.xz
mkdir "$tmp/deb"
printf '2.0\n' >"$tmp/deb/debian-binary"
printf 'Package: fuzz\n' >"$tmp/deb/control"
tar -C "$tmp/deb" --mtime=@0 --owner=0 --group=0 --numeric-owner -cJf "$tmp/deb/control.tar.xz" control
tarc | xz -9 >"$tmp/deb/data.tar.xz"
(cd "$tmp/deb" && ar rcD "$a/package.deb" debian-binary control.tar.xz data.tar.xz)

cp "$root/data-manifest.txt" "$out/manifest/"
# task folders for check_task (tests/fuzz/check_task.c packs a folder's
# files with "#PN-FILE#" between them): backend tests in the variant layout
# export writes (model.onnx, test_data_set_0/), a task.json with the members
# check reads, and as candidate the reference itself (an empty part), the
# same model as a file, or another model
pack_task() { # NAME TEST CANDIDATE_TEST_OR_EMPTY
	d="$data/node/$2"
	[ -f "$d/model.onnx" ] || return 0
	{
		printf '{"task":"t0001-%s","pattern":"00000000000000000000000000000000","split":"test",' "$2"
		printf '"seed":7,"variants":[{"name":"v01","inputs":[{"range":[-2,2]}]}]}'
		printf '#PN-FILE#'
		cat "$d/model.onnx"
		printf '#PN-FILE#'
		[ -z "$3" ] || cat "$data/node/$3/model.onnx"
		for pb in "$d"/test_data_set_0/input_*.pb; do
			[ -f "$pb" ] && printf '#PN-FILE#i' && cat "$pb"
		done
		for pb in "$d"/test_data_set_0/output_*.pb; do
			[ -f "$pb" ] && printf '#PN-FILE#o' && cat "$pb"
		done
	} >"$out/check_task/$1"
}
pack_task add-self test_add ""
pack_task add-file test_add test_add
pack_task relu-vs-add test_relu test_add
pack_task matmul-self test_matmul_2d ""
pack_task softmax-self test_softmax_example ""
pack_task conv-self test_conv_with_strides_padding ""
pack_task if-self test_if ""
pack_task loop-self test_loop11 ""
pack_task topk-vs-relu test_top_k test_relu
for h in onnx_model archive manifest tensorproto canon_decode json check_task torchscript; do
	printf '%s: %d seeds, %d bytes\n' "$h" "$(ls "$out/$h" | wc -l)" "$(cat "$out/$h"/* | wc -c)"
done
