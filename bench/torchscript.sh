#!/bin/sh
# bench/torchscript.sh [NAME[:SIZE]...] - `make bench-torchscript`: every
# torchvision classification and segmentation architecture that traces (the
# shared corpus's list), plus the scripted and traced modules of
# tests/fixtures/torchscript_models.py, written by torch as TorchScript
# archives and as torch.onnx exports, then read by passnet:
#
#   KEEP=DIR bench/torchscript.sh [NAME...]
#
# For each model it prints whether `passnet run model.pt` runs, the largest
# difference from torch's own output and how many elements lie outside
# rtol 1e-3 / atol 1e-4; how many lie outside that tolerance of the float64
# answer (torch in float64 on the same weights), for passnet and for torch's
# own float32 output; whether passnet agrees with torch (nothing outside,
# or no more outside the float64 answer than torch's own output: where two
# float32 sums of thousands of terms cancel, neither is nearer the truth
# than its rounding, and the float64 answer says which is); the time passnet
# takes to read, lower and cut it with every cut hashed (`passnet hash --list`, CPU seconds), and how many of the export's distinct
# sole-op hashes are the archive's; then the totals over all models: the
# share of the exports' distinct sole-op hashes found among the archives'
# and the ops behind the rest.  KEEP=DIR keeps the fixtures (they take a
# few minutes to write) and reuses them on the next run.
set -eu
cd "$(dirname "$0")/.."
PY=${PYTHON:-/usr/bin/python3}
P=$PWD/bin/passnet
dir=${KEEP:-$(mktemp -d)}
mkdir -p "$dir"
[ -n "${KEEP:-}" ] || trap 'rm -rf "$dir"' EXIT
if [ $# -eq 0 ]; then
	set -- resnet18 resnet50 resnext50_32x4d wide_resnet50_2 vgg11:224 vgg16_bn:224 alexnet:224 \
		squeezenet1_0 squeezenet1_1 densenet121 inception_v3:160 googlenet shufflenet_v2_x1_0 \
		mobilenet_v2 mobilenet_v3_large mobilenet_v3_small mnasnet1_0 efficientnet_b0 \
		regnet_x_400mf vit_b_16:224 vit_b_32:224 swin_t:224 convnext_tiny fcn_resnet50 \
		deeplabv3_resnet50 deeplabv3_mobilenet_v3_large lraspp_mobilenet_v3_large \
		mlp attention lstm
fi
printf '%-30s %-6s %12s %10s %11s %-6s %8s %12s\n' model runs max_diff outside outside64 agrees \
	hash_cpu sole_hashes
agreeing=0
ran=0
n_models=$#
: >"$dir/all_onnx"
: >"$dir/all_pt"
for spec in "$@"; do
	m=${spec%%:*}
	size=${spec#*:}
	[ "$size" = "$spec" ] && size=64
	d=$dir/$m
	if [ ! -f "$d/model.pt" ]; then
		"$PY" tests/fixtures/torchscript_models.py "$dir" "$spec" >"$dir/$m.log" 2>&1 || {
			echo "$m: the fixture could not be written: $(tail -n 1 "$dir/$m.log")"
			continue
		}
	fi
	case $m in
	mlp) dims="--dim batch=4" ;;
	attention) dims="--dim batch=1 --dim sequence=5" ;;
	lstm) dims="--dim batch=1 --dim sequence=6" ;;
	*) dims="--dim batch=1 --dim height=$size --dim width=$size" ;;
	esac
	rm -rf "$d/passnet"
	runs=no
	diff="-"
	outside="-"
	outside64="-"
	agrees=no
	if "$P" run "$d/model.pt" --inputs "$d/inputs" --outputs "$d/passnet" >"$d/run.log" 2>&1; then
		runs=yes
		set -- $("$PY" - "$d" <<'EOF'
import glob, os, sys
import numpy as np, onnx
from onnx import numpy_helper
d = sys.argv[1]
def load(*path):
    return numpy_helper.to_array(onnx.load_tensor(os.path.join(d, *path))).astype(np.float64)
def outside(a, ref):
    return int((np.abs(a - ref) > 1e-4 + 1e-3 * np.abs(ref)).sum())
worst, bad, p64, t64, wide = 0.0, 0, 0, 0, True
for f in sorted(glob.glob(os.path.join(d, "torch", "output_*.pb"))):
    base = os.path.basename(f)
    t, o = load("torch", base), load("passnet", base)
    worst = max(worst, float(np.abs(o - t).max()))
    bad += outside(o, t)
    if os.path.exists(os.path.join(d, "torch64", base)):
        e = load("torch64", base)
        p64 += outside(o, e)
        t64 += outside(t, e)
    else:
        wide = False
print("%.3g %d %s %s" % (worst, bad, "%d/%d" % (p64, t64) if wide else "-",
                         "yes" if bad == 0 or (wide and p64 <= t64) else "no"))
EOF
)
		diff=$1
		outside=$2
		outside64=$3
		agrees=$4
		ran=$((ran + 1))
	fi
	if [ "$agrees" = yes ]; then
		agreeing=$((agreeing + 1))
	fi
	/usr/bin/time -f "%U %S" -o "$d/time" "$P" hash --list $dims "$d/model.pt" >"$d/pt.list" 2>"$d/pt.err" || true
	lower=$(awk '{printf "%.2f", $1 + $2}' "$d/time")
	awk '$2 == "sole" {print $1, $3}' "$d/pt.list" | sort -u >"$d/pt.sole"
	hashes="-"
	if [ -f "$d/model.onnx" ]; then
		"$P" hash --list "$d/model.onnx" 2>/dev/null | awk '$2 == "sole" {print $1, $3}' | sort -u >"$d/onnx.sole"
		hashes="$(comm -12 "$d/pt.sole" "$d/onnx.sole" | wc -l)/$(wc -l <"$d/onnx.sole")"
		cat "$d/onnx.sole" >>"$dir/all_onnx"
		cat "$d/pt.sole" >>"$dir/all_pt"
	fi
	printf '%-30s %-6s %12s %10s %11s %-6s %8s %12s\n' "$m" "$runs" "$diff" "$outside" "$outside64" \
		"$agrees" "$lower" "$hashes"
done
echo "models that run: $ran of $n_models; agree with torch: $agreeing"
sort -u "$dir/all_onnx" -o "$dir/all_onnx"
sort -u "$dir/all_pt" -o "$dir/all_pt"
total=$(wc -l <"$dir/all_onnx")
common=$(comm -12 "$dir/all_pt" "$dir/all_onnx" | wc -l)
echo "distinct sole-op hashes of the exports found among the archives': $common of $total" \
	"($(awk -v a="$common" -v b="$total" 'BEGIN { printf "%.1f", b ? 100 * a / b : 0 }')%)"
echo "ops of the exports' hashes the archives lack (count per op):"
comm -13 "$dir/all_pt" "$dir/all_onnx" | awk '{print $2}' | sort | uniq -c | sort -rn | head -n 20
