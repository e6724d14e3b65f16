"""Compares the outputs of `passnet run FILE` (real weights) and `passnet
run KEY` (regenerated weights) for tests/cli/weights_scale*.sh.

  compare NAME FILE_DIR KEY_DIR   one line per float output: the real and
                                  regenerated largest magnitudes and how far
                                  apart (max(g/r, r/g)); "FAIL" past 10x
  normal NAME DIR                 every float output finite and free of
                                  denormals (0 or |x| >= FLT_MIN)
Exits 1 when a rule fails.  Outputs whose real values are all 0 are
printed, not judged (no scale to keep).
"""
import glob
import os
import sys

import numpy as np
import onnx
from onnx import numpy_helper

RULE = 10.0
FLT_MIN = np.finfo(np.float32).tiny


def outputs(folder):
    res = []
    for f in sorted(glob.glob(os.path.join(folder, "output_*.pb")),
                    key=lambda p: int(p.rsplit("_", 1)[1].split(".")[0])):
        t = onnx.TensorProto()
        t.ParseFromString(open(f, "rb").read())
        res.append((t.name or os.path.basename(f), numpy_helper.to_array(t)))
    return res


def amp(a):
    a = a[np.isfinite(a)]
    return float(np.abs(a).max()) if a.size else 0.0


def compare(name, fdir, kdir):
    real, regen = outputs(fdir), outputs(kdir)
    if len(real) != len(regen) or not real:
        print(f"FAIL {name}: {len(real)} outputs with the real weights, {len(regen)} regenerated")
        return False
    ok = True
    for (n, r), (_, g) in zip(real, regen):
        if r.dtype.kind != "f":
            continue
        ra, ga = amp(r), amp(g)
        finite = bool(np.isfinite(g).all()) or not bool(np.isfinite(r).all())
        if ra == 0:
            print(f"{name:40s} {n:24s} real 0 regen {ga:.3g}: not judged")
            continue
        off = max(ga / ra, ra / ga) if ga > 0 else float("inf")
        good = off <= RULE and finite
        ok &= good
        print(f"{name:40s} {n:24s} real {ra:.3g} regen {ga:.3g} off {off:.3g}x"
              f"{'' if good else '  FAIL'}")
    return ok


def normal(name, folder):
    ok = True
    for n, a in outputs(folder):
        if a.dtype.kind != "f":
            continue
        nz = np.abs(a[a != 0])
        bad = not np.isfinite(a).all() or bool((nz < FLT_MIN).any()) or amp(a) == 0
        ok &= not bad
        print(f"{name:40s} {n:24s} largest {amp(a):.3g} smallest nonzero "
              f"{float(nz.min()) if nz.size else 0:.3g}{'  FAIL' if bad else ''}")
    return ok


if __name__ == "__main__":
    mode = sys.argv[1]
    good = compare(*sys.argv[2:5]) if mode == "compare" else normal(*sys.argv[2:4])
    sys.exit(0 if good else 1)
