# TorchScript archives (model/torchscript.h), made here by Debian's torch 1.13
# and torchvision 0.14 (tests/fixtures/torchscript_models.py):
#  1. `passnet run model.pt` agrees with torch's own outputs (rtol 1e-3,
#     atol 1e-4) for traced torchvision CNNs, a traced MLP, attention block
#     and LSTM, weights of every storage kind and stride, Swin's shifted
#     windows in small (pad, roll, in-place fills into slices), a scripted ResNet (torchvision's own code: None checks,
#     asserts, functional helpers), and scripted modules whose control flow
#     runs at lowering time
#     (a ModuleList loop, an if on an attribute) or becomes If and Loop (an
#     if on a tensor, a for over an int input, a while on a tensor);
#  2. sole-op hashes: at least 70% of the distinct sole-op hashes of the
#     module's torch.onnx export appear among the archive's;
#  3. `passnet build` over a folder of .pt files stores and partitions them
#     like .onnx files; a folder and a tar of the same files, named in a
#     manifest, build the same subgraphs, and so do a url source of a .pt
#     (a server on 127.0.0.1) and a TorchServe .mar holding it;
#  4. bad input: a truncated archive, a torch.save state dict and
#     torch.export .pt2 archives (both layouts torch 2 writes: torch 1.13
#     cannot write one, so the test zips the members) are each one line
#     naming the file and the reason, recorded, and the rest of the build
#     goes on.
. "$ROOT/tests/cli/lib.sh"
fx="$TEST_TMP/fx"
models="resnet18 mobilenet_v2 squeezenet1_1 mlp attention lstm weights shifted unrolled control while scripted_resnet18"
"$PY" "$ROOT/tests/fixtures/torchscript_models.py" "$fx" $models >"$TEST_TMP/fx.log" 2>&1 ||
	fail "fixtures: $(tail -n 3 "$TEST_TMP/fx.log")"

# agree OURS THEIRS: every output_N.pb of THEIRS matches OURS
agree() {
	"$PY" - "$1" "$2" <<'EOF' || fail "outputs of $1 differ from torch's"
import glob, os, sys
import numpy as np
import onnx
from onnx import numpy_helper
ours, theirs = sys.argv[1], sys.argv[2]
files = sorted(glob.glob(os.path.join(theirs, "output_*.pb")))
assert files, "torch wrote no outputs"
for f in files:
    t = numpy_helper.to_array(onnx.load_tensor(f))
    o = numpy_helper.to_array(onnx.load_tensor(os.path.join(ours, os.path.basename(f))))
    assert o.shape == t.shape, (f, o.shape, t.shape)
    if not np.allclose(o, t, rtol=1e-3, atol=1e-4):
        d = np.abs(o.astype(np.float64) - t)
        sys.exit("%s: max abs diff %g" % (f, d.max()))
EOF
}

# --- 1. outputs agree with torch's --------------------------------------------
for m in $models; do
	d="$fx/$m"
	pn run "$d/model.pt" --inputs "$d/inputs" --outputs "$TEST_TMP/out_$m"
	[ "$status" -eq 0 ] || fail "run $m.pt: $out"
	agree "$TEST_TMP/out_$m" "$d/torch"
done
# the scripted control flow became ONNX control flow, not a fixed unrolling
pn hash --list "$fx/control/model.pt"
[ "$status" -eq 0 ] || fail "hash control.pt: $out"
expect_contains "$out" "If" "an if on a tensor is an If node"
expect_contains "$out" "Loop" "a for over an int input is a Loop node"
pn hash --list "$fx/while/model.pt"
[ "$status" -eq 0 ] || fail "hash while.pt: $out"
expect_contains "$out" "Loop" "a while on a tensor is a Loop node"

# --- 2. sole-op hashes agree with the ONNX export's ----------------------------
sole_hashes() { printf '%s\n' "$out" | awk '$2 == "sole" {print $1}' | sort -u; }
for m in resnet18 mobilenet_v2 squeezenet1_1 mlp attention; do
	d="$fx/$m"
	# the archive's dims bound at the sizes the export was traced at
	case $m in
	mlp) dims="--dim batch=4" ;;
	attention) dims="--dim batch=1 --dim sequence=5" ;;
	*) dims="--dim batch=1 --dim height=64 --dim width=64" ;;
	esac
	pn hash --list $dims "$d/model.pt"
	[ "$status" -eq 0 ] || fail "hash $m.pt: $out"
	sole_hashes >"$TEST_TMP/pt_$m"
	pn hash --list "$d/model.onnx"
	[ "$status" -eq 0 ] || fail "hash $m.onnx: $out"
	sole_hashes >"$TEST_TMP/onnx_$m"
	total=$(wc -l <"$TEST_TMP/onnx_$m")
	common=$(comm -12 "$TEST_TMP/pt_$m" "$TEST_TMP/onnx_$m" | wc -l)
	[ "$total" -gt 0 ] || fail "$m.onnx has no sole ops"
	[ $((common * 10)) -ge $((total * 7)) ] ||
		fail "$m: $common of the export's $total sole-op hashes are the archive's (want >= 70%)"
done

# --- 3. a folder of .pt files builds; a manifest tar of them builds the same ---
mkdir -p "$TEST_TMP/pts"
for m in squeezenet1_1 mlp unrolled; do cp "$fx/$m/model.pt" "$TEST_TMP/pts/$m.pt"; done
pn --db "$TEST_TMP/db1" build "$TEST_TMP/pts"
[ "$status" -eq 0 ] || fail "build pts: $out"
expect_contains "$out" "3 new models" "three archives stored"
pn --db "$TEST_TMP/db1" ls
expect_contains "$out" "squeezenet1_1.pt" "squeezenet listed"
pn --db "$TEST_TMP/db1" stats
[ "$status" -eq 0 ] || fail "stats: $out"
(cd "$TEST_TMP/pts" && tar cf "$TEST_TMP/pts.tar" ./*.pt) || fail "tar"
sum=$(sha256sum "$TEST_TMP/pts.tar" | cut -c1-64)
printf 'pts archive %s %s BSD-3-Clause torch-written fixtures\n' "$TEST_TMP/pts.tar" "$sum" >"$TEST_TMP/manifest.txt"
pn --db "$TEST_TMP/db2" build --manifest "$TEST_TMP/manifest.txt"
[ "$status" -eq 0 ] || fail "build manifest: $out"
expect_contains "$out" "3 new models" "three archives stored from the tar"
pn --db "$TEST_TMP/db1" ls --subgraphs
a=$(printf '%s\n' "$out" | awk '{print $1}' | sort)
pn --db "$TEST_TMP/db2" ls --subgraphs
b=$(printf '%s\n' "$out" | awk '{print $1}' | sort)
[ -n "$a" ] || fail "no subgraphs from the .pt files"
expect_eq "$b" "$a" "the tar's subgraphs are the folder's"

# a url source of a .pt (served here on 127.0.0.1) and a TorchServe .mar (a
# zip holding the archive) build the same subgraphs
srv="$TEST_TMP/srv"
mkdir -p "$srv/files" "$TEST_TMP/mar/MAR-INF"
cp "$TEST_TMP/pts/mlp.pt" "$srv/files/mlp.pt"
cp "$TEST_TMP/pts/mlp.pt" "$TEST_TMP/mar/mlp.pt"
echo '{"model": {"serializedFile": "mlp.pt"}}' >"$TEST_TMP/mar/MAR-INF/MANIFEST.json"
(cd "$TEST_TMP/mar" && zip -q -r "$srv/files/mlp.mar" .) || fail "the .mar fixture"
start_source_server "$srv" "$TEST_TMP/requests.log"
printf 'web-pt url %s/files/mlp.pt %s BSD-3-Clause a .pt by url\n' "$base" \
	"$(sha256sum "$srv/files/mlp.pt" | cut -c1-64)" >"$TEST_TMP/web.txt"
PASSNET_CACHE="$TEST_TMP/cache" pn --db "$TEST_TMP/db4" build --manifest "$TEST_TMP/web.txt"
[ "$status" -eq 0 ] || fail "build the url source: $out"
expect_contains "$out" "1 new models" "the .pt fetched by url is stored"
pn --db "$TEST_TMP/db5" build "$srv/files/mlp.mar"
[ "$status" -eq 0 ] || fail "build the .mar: $out"
expect_contains "$out" "1 new models" "the .pt inside the .mar is stored"
pn --db "$TEST_TMP/db4" ls --subgraphs
a=$(printf '%s\n' "$out" | awk '{print $1}' | sort)
pn --db "$TEST_TMP/db5" ls --subgraphs
b=$(printf '%s\n' "$out" | awk '{print $1}' | sort)
[ -n "$a" ] || fail "no subgraphs from the url source"
expect_eq "$b" "$a" "the .mar's subgraphs are the url's"

# --- 4. bad input: one line each, the rest goes on ------------------------------
mkdir -p "$TEST_TMP/bad"
cp "$fx/mlp/model.pt" "$TEST_TMP/bad/good.pt"
head -c 3000 "$fx/resnet18/model.pt" >"$TEST_TMP/bad/truncated.pt"
"$PY" -c 'import torch, sys; torch.save(torch.nn.Linear(2, 2).state_dict(), sys.argv[1])' \
	"$TEST_TMP/bad/weights.pth" || fail "state dict fixture"
pn --db "$TEST_TMP/db3" build "$TEST_TMP/bad"
expect_contains "$out" "1 new models" "the good archive is stored"
line=$(printf '%s\n' "$out" | grep 'truncated.pt' | head -n 1)
[ -n "$line" ] || fail "no line names truncated.pt: $out"
line=$(printf '%s\n' "$out" | grep 'weights.pth' | head -n 1)
expect_contains "$line" "torch.save" "the state dict is named for what it is"
"$PY" - "$TEST_TMP/bad2" <<'EOF' || fail "pt2 fixtures"
import os, sys, zipfile
d = sys.argv[1]
os.makedirs(d, exist_ok=True)
# torch 2.1-2.4: torch.export.save; torch 2.5+: the PT2 archive format
with zipfile.ZipFile(os.path.join(d, "exported.pt2"), "w") as z:
    z.writestr("exported/serialized_exported_program.json", "{}")
    z.writestr("exported/serialized_state_dict.pt", b"")
    z.writestr("exported/version", "1")
with zipfile.ZipFile(os.path.join(d, "packaged.pt2"), "w") as z:
    z.writestr("packaged/archive_format", "pt2")
    z.writestr("packaged/version", "0")
    z.writestr("packaged/models/model.json", "{}")
EOF
cp "$fx/mlp/model.pt" "$TEST_TMP/bad2/good.pt"
pn --db "$TEST_TMP/db6" build "$TEST_TMP/bad2"
expect_contains "$out" "1 new models" "the good archive beside the .pt2 files is stored"
expect_contains "$out" "2 failed" "both .pt2 archives are recorded as failed"
for f in exported.pt2 packaged.pt2; do
	line=$(printf '%s\n' "$out" | grep "$f" | head -n 1)
	expect_contains "$line" "torch.export .pt2 archive" "$f is named for what it is"
done
pn --db "$TEST_TMP/db6" ls --status failed
expect_contains "$out" "packaged.pt2" "the .pt2 archive is recorded in the store"
