#!/usr/bin/python3
"""bench/protocol_agree.py SAMPLE FULL_A FULL_B ADAPTIVE - how two timing
protocols' profiles of one sample agree (bench/protocol.sh).

Each of FULL_A, FULL_B, ADAPTIVE is `passnet --json ls --subgraphs` of a
store that profiled SAMPLE (one hash a line).  Prints, over the subgraphs
profiled ok or unstable in all three:
  - timing runs per subgraph and trials kept, per run (Profile.timing_runs);
  - the share whose time-dependent flags agree, for every flag and for the
    four together: full A against full B (the noise floor: one protocol
    against itself) and each full run against the adaptive one;
  - the share whose medians are within 10% of each other, and the geometric
    mean of their ratio.
Exits 1 when a file lacks a sampled subgraph's profile or the protocol a
run was asked for (so a test can run it on small stores).
"""
import json
import math
import sys

TIME_FLAGS = ("slow", "overhead-bound", "parallel-slowdown", "unstable")


def load(path):
    out = {}
    with open(path) as f:
        for line in f:
            o = json.loads(line)
            if "profile" in o:
                out[o["hash"]] = o["profile"]
    return out


def agree_share(a, b, keys, flag=None):
    def fl(p):
        f = set(p["flags"]) & set(TIME_FLAGS)
        return (flag in f) if flag else f
    same = sum(1 for k in keys if fl(a[k]) == fl(b[k]))
    return same, len(keys)


def median_agreement(a, b, keys):
    close, logs = 0, []
    for k in keys:
        x, y = a[k]["median_us"], b[k]["median_us"]
        if x > 0 and y > 0:
            close += abs(y / x - 1) <= 0.10
            logs.append(math.log(y / x))
    gm = math.exp(sum(logs) / len(logs)) if logs else float("nan")
    return close, len(logs), gm


def main():
    sample = [l.strip() for l in open(sys.argv[1]) if l.strip()]
    runs = {"full A": load(sys.argv[2]), "full B": load(sys.argv[3]),
            "adaptive": load(sys.argv[4])}
    want = {"full A": "full", "full B": "full", "adaptive": "adaptive"}
    for name, r in runs.items():
        missing = [h for h in sample if h not in r]
        wrong = [h for h in sample if h in r and r[h].get("protocol") != want[name]
                 and r[h]["status"] != "failed"]
        if missing or wrong:
            print(f"{name}: {len(missing)} sampled subgraphs without a profile, "
                  f"{len(wrong)} not under the {want[name]} protocol")
            return 1
    keys = [h for h in sample if all(r[h]["status"] in ("ok", "unstable") for r in runs.values())]
    print(f"profiled in all three runs: {len(keys)} of {len(sample)} sampled")
    print(f"{'run':<10} {'timing runs/subgraph':>21} {'trials kept':>12}")
    for name, r in runs.items():
        n = max(len(keys), 1)
        print(f"{name:<10} {sum(r[k]['timing_runs'] for k in keys) / n:>21.2f} "
              f"{sum(r[k]['trials_kept'] for k in keys) / n:>12.2f}")
    pairs = (("full A", "full B"), ("full A", "adaptive"), ("full B", "adaptive"))
    print(f"{'flags agree':<22}" + "".join(f"{a + ' ~ ' + b:>22}" for a, b in pairs))
    for flag in TIME_FLAGS + (None,):
        cells = []
        for a, b in pairs:
            s, n = agree_share(runs[a], runs[b], keys, flag)
            cells.append(f"{100.0 * s / max(n, 1):6.1f}% ({s}/{n})")
        print(f"{flag or 'all four':<22}" + "".join(f"{c:>22}" for c in cells))
    cells = []
    for a, b in pairs:
        c, n, gm = median_agreement(runs[a], runs[b], keys)
        cells.append(f"{100.0 * c / max(n, 1):5.1f}% x{gm:.3f}")
    print(f"{'median within 10%':<22}" + "".join(f"{c:>22}" for c in cells))
    return 0


if __name__ == "__main__":
    sys.exit(main())
