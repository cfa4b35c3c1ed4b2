#!/usr/bin/env python3
"""Held-out comparison of `lca model` with Extra-P on data with a known truth.

Generates measurements of four callpaths over two parameters p and n (6 x 6 levels, 5
repetitions, 3% multiplicative Gaussian noise, a fixed seed), whose true run times are known:

  sum          1 + 0.05 n log2(n) + 2 log2(p)          (terms in each parameter, added)
  threshold    5 + 0.01 n + 0.8 max(p - 16, 0)          (a threshold in p)
  interaction  2 + 0.02 n log2(p)                       (a product of the two)
  strong       10 + 0.5 n / p                           (strong scaling: falls with p)

For four hold-out schemes (the largest p, the largest n, only the corner where both are
largest, and every point off the cross of the least p and the least n, so that the fit sees
a cross design) both tools are fitted on the rest, from the same Extra-P text file, and predict
the held-out points; the relative error of each prediction is taken against the true (noise-free)
value. Prints, per scheme, the mean and median relative errors of both tools, then per callpath.

Extra-P is installed with pip into a throw-away virtual environment (--venv, default a
temporary folder); lca is the binary given by --lca (default: the newer of target/release/lca
and target/debug/lca). Only the standard library is needed outside the environment.

  python3 tools/extrap-compare/compare.py [--lca target/release/lca] [--venv DIR]
"""

import argparse
import csv
import io
import json
import math
import os
import random
import statistics
import subprocess
import sys
import tempfile

from extrap_env import extrap_python, lca_binary

P = [2, 4, 8, 16, 32, 64]
N = [64, 128, 256, 512, 1024, 2048]
REPETITIONS = 5
NOISE = 0.03
SEED = 22

TRUTH = {
    "sum": lambda p, n: 1 + 0.05 * n * math.log2(n) + 2 * math.log2(p),
    "threshold": lambda p, n: 5 + 0.01 * n + 0.8 * max(p - 16, 0),
    "interaction": lambda p, n: 2 + 0.02 * n * math.log2(p),
    "strong": lambda p, n: 10 + 0.5 * n / p,
}

SCHEMES = {
    "largest p": lambda p, n: p == P[-1],
    "largest n": lambda p, n: n == N[-1],
    "only the corner": lambda p, n: p == P[-1] and n == N[-1],
    # A cross (Extra-P's sparse design): fitted on p at the least n and n at the least p.
    "off the cross": lambda p, n: p != P[0] and n != N[0],
}


def measurements():
    """{callpath: {(p, n): [values]}}, the same for every scheme."""
    rng = random.Random(SEED)
    data = {}
    for name, f in TRUTH.items():
        data[name] = {
            (p, n): [f(p, n) * (1 + rng.gauss(0, NOISE)) for _ in range(REPETITIONS)]
            for p in P
            for n in N
        }
    return data


def extrap_text(data, keep):
    """An Extra-P text file of the points `keep` says to keep."""
    points = [(p, n) for n in N for p in P if keep(p, n)]
    lines = ["PARAMETER p", "PARAMETER n"]
    lines.append("POINTS " + " ".join(f"( {p} {n} )" for p, n in points))
    lines.append("METRIC time")
    for name, values in data.items():
        lines.append(f"REGION {name}")
        for point in points:
            lines.append("DATA " + " ".join(repr(v) for v in values[point]))
    return "\n".join(lines) + "\n"


def run_extrap_inside(train, points_file):
    """In the virtual environment: model every callpath with Extra-P's default modeler and
    print the predictions at the points as JSON."""
    import warnings

    warnings.simplefilter("ignore")
    from extrap.fileio.file_reader.text_file_reader import TextFileReader
    from extrap.modelers.model_generator import ModelGenerator

    with open(points_file) as f:
        points = json.load(f)
    experiment = TextFileReader().read_experiment(train)
    generator = ModelGenerator(experiment)
    generator.model_all()
    names = [p.name for p in experiment.parameters]
    out = {}
    for (callpath, _metric), model in generator.models.items():
        f = model.hypothesis.function
        out[callpath.name] = {
            "model": f.to_string(*experiment.parameters),
            "predictions": [
                float(f.evaluate([pt[names.index("p")], pt[names.index("n")]]))
                for pt in points
            ],
        }
    json.dump(out, sys.stdout)


def lca_predictions(lca, train, points, work):
    model = os.path.join(work, "model.toml")
    command = [lca, "model", train, "-o", model, "--force"]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"{' '.join(command)}: {done.stderr.strip()}")
    at = []
    for p, n in points:
        at += ["--at", f"p={p},n={n}"]
    out = subprocess.run(
        [lca, "predict", model, "--format", "csv"] + at,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    rows = list(csv.reader(io.StringIO(out)))
    header, rows = rows[0], rows[1:]
    result = {}
    for name in TRUTH:
        column = header.index(f"{name} [time]")
        result[name] = [float(r[column]) for r in rows]
    return result


def relative(predicted, truth):
    return abs(predicted - truth) / abs(truth)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lca", help="the lca binary")
    parser.add_argument("--venv", help="where to make the virtual environment")
    parser.add_argument("--extrap-inside", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.extrap_inside:
        run_extrap_inside(*args.extrap_inside)
        return
    lca = lca_binary(args.lca)
    work = tempfile.mkdtemp(prefix="extrap-compare-")
    python = extrap_python(args.venv or os.path.join(work, "venv"))
    version = subprocess.run(
        [python, "-m", "pip", "show", "extrap"], capture_output=True, text=True
    ).stdout
    version = next(
        (l.split(":", 1)[1].strip() for l in version.splitlines() if l.startswith("Version")),
        "?",
    )
    data = measurements()
    print(
        f"truth: {', '.join(TRUTH)}; p in {P}, n in {N}; {REPETITIONS} repetitions, "
        f"{NOISE:.0%} noise, seed {SEED}; Extra-P {version} (default modeler), lca defaults"
    )
    print()
    print(f"{'held out':<17} {'points':>6}  {'lca mean':>9} {'lca median':>10}  "
          f"{'Extra-P mean':>12} {'Extra-P median':>14}")
    details = []
    for scheme, held in SCHEMES.items():
        train = os.path.join(work, "train.txt")
        with open(train, "w") as f:
            f.write(extrap_text(data, lambda p, n: not held(p, n)))
        points = [(p, n) for n in N for p in P if held(p, n)]
        with open(os.path.join(work, "points.json"), "w") as f:
            json.dump(points, f)
        # Without a corner the runs choose the form (docs/modelling.md#without-every-corner).
        ours = lca_predictions(lca, train, points, work)
        theirs = json.loads(
            subprocess.run(
                [python, os.path.abspath(__file__), "--extrap-inside", train,
                 os.path.join(work, "points.json")],
                check=True,
                capture_output=True,
                text=True,
            ).stdout
        )
        errors = {"lca": [], "Extra-P": []}
        for name, f in TRUTH.items():
            truth = [f(p, n) for p, n in points]
            e_lca = [relative(a, t) for a, t in zip(ours[name], truth)]
            e_x = [relative(a, t) for a, t in zip(theirs[name]["predictions"], truth)]
            errors["lca"] += e_lca
            errors["Extra-P"] += e_x
            details.append((scheme, name, statistics.mean(e_lca), statistics.mean(e_x),
                            theirs[name]["model"]))
        pct = lambda v: f"{100 * v:.1f}%"
        print(
            f"{scheme:<17} {len(errors['lca']):>6}  {pct(statistics.mean(errors['lca'])):>9} "
            f"{pct(statistics.median(errors['lca'])):>10}  "
            f"{pct(statistics.mean(errors['Extra-P'])):>12} "
            f"{pct(statistics.median(errors['Extra-P'])):>14}"
        )
    print()
    print("mean relative error per callpath (Extra-P's model):")
    for scheme, name, a, b, model in details:
        print(f"  {scheme:<17} {name:<12} lca {100 * a:6.1f}%  Extra-P {100 * b:6.1f}%  {model}")


if __name__ == "__main__":
    main()
