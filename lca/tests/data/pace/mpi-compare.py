# Per point: the measured T_p of the src and dst transports (median and minimum of the
# replicates, and the median of the paired ratios dst/src: each replicate's two runs were
# made one after the other), against the PACE model built from the src runs predicted with
# src's and dst's machine files, and the flat model of the src runs. Run in a folder holding
# <src>-pace.toml (lca pace build), <src>-machine.toml and <dst>-machine.toml (pp calibrate
# --mpi) and study-mpi/ (the study):  LCA=target/release/lca python3 mpi-compare.py shm tcp
# [DATAFILE]  (docs/results.md#pace-for-mpi).
import subprocess, statistics, csv, io, sys, os
L = os.environ.get("LCA", "lca")
rows = [dict(f.split("=", 1) for f in l.split()) for l in open(sys.argv[3] if len(sys.argv) > 3 else "study-mpi/fft2d-mpi.dat") if l.strip() and not l.startswith("#")]
points = sorted({(int(float(r["n"])), int(r["p"])) for r in rows})
def walls(impl, n, p):
    return {int(r["replicate"]): float(r["wall"]) for r in rows if r["impl"] == impl and int(float(r["n"])) == n and int(r["p"]) == p}
at = sum([["--at", f"n={n},p={p}"] for n, p in points], [])
def pace(model, machine=None):
    cmd = [L, "pace", "predict", model] + (["--machine", machine] if machine else []) + at
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout.splitlines()
    return [float(l.split()[1]) for l in out if l.startswith("n=")]
def flat(model):
    cmd = [L, "predict", model, "--format", "csv"] + at
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    return [float(r["T_p"]) for r in csv.DictReader(io.StringIO(out))]
src, dst = sys.argv[1], sys.argv[2]
own = pace(f"{src}-pace.toml", f"{src}-machine.toml")
swapped = pace(f"{src}-pace.toml", f"{dst}-machine.toml")
fl = flat(f"study-mpi/{src}.toml")
err = lambda pred, meas: 100 * (pred / meas - 1)
print(f"PACE model from the {src} runs, predicted with {dst}'s machine file, against the {dst} runs (ms; med = median, min = minimum of the replicates)")
print(f"{'point':>11} {'runs':>4} {src+' med':>8} {dst+' med':>8} {dst+' min':>8} {'ratio':>6} | {'PACE':>7} {'->'+dst:>7} {'ratio':>6} {'err med':>8} {'err min':>8} | {'flat':>7} {'err med':>8} {'err min':>8}")
acc = {k: [] for k in ("pm", "pn", "fm", "fn")}
for i, (n, p) in enumerate(points):
    ws, wd = walls(src, n, p), walls(dst, n, p)
    ratio = statistics.median([wd[k] / ws[k] for k in ws if k in wd])
    ms, md, mn = statistics.median(ws.values()), statistics.median(wd.values()), min(wd.values())
    e = [err(swapped[i], md), err(swapped[i], mn), err(fl[i], md), err(fl[i], mn)]
    for k, v in zip(acc, e):
        acc[k].append(abs(v))
    print(f"{'n=%d p=%d' % (n, p):>11} {len(wd):>4} {ms*1e3:8.2f} {md*1e3:8.2f} {mn*1e3:8.2f} {ratio:6.2f} | {own[i]*1e3:7.2f} {swapped[i]*1e3:7.2f} {swapped[i]/own[i]:6.2f} {e[0]:+7.1f}% {e[1]:+7.1f}% | {fl[i]*1e3:7.2f} {e[2]:+7.1f}% {e[3]:+7.1f}%")
m = {k: statistics.mean(v) for k, v in acc.items()}
print(f"mean |error|: PACE -> {dst} {m['pm']:.1f}% of the median, {m['pn']:.1f}% of the minimum; flat {m['fm']:.1f}% / {m['fn']:.1f}%")
