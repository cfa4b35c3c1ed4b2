#!/usr/bin/env python3
"""`lca model` and Extra-P on the truths of Extra-P's own multi-parameter tests.

Extra-P's tests of its multi-parameter modeler (tests/test_multi_param_modeler.py,
`test_modeling` and `test_modeling_plus`, extrap 4.2.5) fit 200 + 10 f(x) g(y) and
200 + 10 f(x) + 20 g(y) on the grid {2, 4, 8, 16, 32}^2 for 41 consecutive pairs of terms
x^(a/b) log2(x)^c of their list. Here each truth is written as an Extra-P JSON file, noise-free
or with uniform multiplicative noise of +-NOISE on 3 repetitions, both tools model it with their
defaults, and each predicts (64, 64), (128, 32) and (32, 128); the worst relative miss of the
three against the noise-free truth is a case's error. Prints, per noise level and seed, the
mean and median error and how many cases are within 0.1% and 5%, for each tool
(docs/results.md#against-extra-p).

Extra-P is installed with pip into a throw-away virtual environment (--venv, default a
temporary folder), as compare.py does; lca is the binary given by --lca (default: the newer of
target/release/lca and target/debug/lca).

  python3 tools/extrap-compare/own_truths.py [--lca target/release/lca] [--venv DIR]
      [--noise 0,0.01,0.05] [--seeds 1,2]
"""

import argparse
import glob
import json
import math
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile

from extrap_env import extrap_python, lca_binary

# Extra-P's list, (a, b, c): x^(a/b) log2(x)^c.
TERMS = [(0, 1, 1), (0, 1, 2), (1, 4, 0), (1, 3, 0), (1, 4, 1), (1, 3, 1), (1, 4, 2), (1, 3, 2),
         (1, 2, 0), (1, 2, 1), (1, 2, 2), (2, 3, 0), (3, 4, 0), (2, 3, 1), (3, 4, 1), (4, 5, 0),
         (2, 3, 2), (3, 4, 2), (1, 1, 0), (1, 1, 1), (1, 1, 2), (5, 4, 0), (5, 4, 1), (4, 3, 0),
         (4, 3, 1), (3, 2, 0), (3, 2, 1), (3, 2, 2), (5, 3, 0), (7, 4, 0), (2, 1, 0), (2, 1, 1),
         (2, 1, 2), (9, 4, 0), (7, 3, 0), (5, 2, 0), (5, 2, 1), (5, 2, 2), (8, 3, 0), (11, 4, 0),
         (3, 1, 0), (3, 1, 1)]
GRID = [2, 4, 8, 16, 32]
BEYOND = [(64, 64), (128, 32), (32, 128)]


def term(e, x):
    a, b, c = e
    return x ** (a / b) * math.log2(x) ** c


def truth(kind, f, g):
    if kind == "products":
        return lambda x, y: 200 + 10 * term(f, x) * term(g, y)
    return lambda x, y: 200 + 10 * term(f, x) + 20 * term(g, y)


def cases():
    """(kind, f, g, file stem) for every truth."""
    for kind in ("products", "sums"):
        for f, g in zip(TERMS, TERMS[1:]):
            stem = f"{kind}_{'_'.join(map(str, f))}_{'_'.join(map(str, g))}"
            yield kind, f, g, stem


def write_files(folder, noise, seed):
    rng = random.Random(seed)
    os.makedirs(folder, exist_ok=True)
    for kind, f, g, stem in cases():
        t = truth(kind, f, g)
        reps = 3 if noise else 1
        points = [{"point": [x, y],
                   "values": [t(x, y) * (1 + rng.uniform(-noise, noise)) for _ in range(reps)]}
                  for x in GRID for y in GRID]
        doc = {"parameters": ["x", "y"], "measurements": {"r": {"m": points}}}
        with open(os.path.join(folder, stem + ".json"), "w") as out:
            json.dump(doc, out)


def parse_stem(stem):
    m = re.fullmatch(r"(products|sums)_(\d+)_(\d+)_(\d+)_(\d+)_(\d+)_(\d+)", stem)
    numbers = list(map(int, m.groups()[1:]))
    return m.group(1), tuple(numbers[:3]), tuple(numbers[3:])


def lca_errors(lca, folder):
    errors = {}
    for path in sorted(glob.glob(os.path.join(folder, "*.json"))):
        stem = os.path.basename(path)[:-5]
        kind, f, g = parse_stem(stem)
        model = os.path.join(folder, stem + ".toml")
        done = subprocess.run([lca, "model", path, "-o", model, "--force"],
                              capture_output=True, text=True)
        if done.returncode != 0:
            sys.exit(f"lca model {path}: {done.stderr.strip()}")
        at = []
        for x, y in BEYOND:
            at += ["--at", f"x={x},y={y}"]
        out = subprocess.run([lca, "predict", model, "--format", "csv"] + at,
                             check=True, capture_output=True, text=True).stdout
        rows = [r.split(",") for r in out.strip().splitlines()]
        column = rows[0].index("r [m]")
        t = truth(kind, f, g)
        errors[stem] = max(abs(float(r[column]) - t(x, y)) / t(x, y)
                           for r, (x, y) in zip(rows[1:], BEYOND))
    return errors


def run_extrap_inside(folder):
    """In the virtual environment: Extra-P's default modeler on every file of `folder`."""
    import warnings

    warnings.simplefilter("ignore")
    from extrap.fileio.file_reader.json_file_reader import JsonFileReader
    from extrap.modelers.model_generator import ModelGenerator

    errors = {}
    for path in sorted(glob.glob(os.path.join(folder, "*.json"))):
        stem = os.path.basename(path)[:-5]
        kind, f, g = parse_stem(stem)
        experiment = JsonFileReader().read_experiment(path)
        generator = ModelGenerator(experiment)
        generator.model_all()
        function = list(generator.models.values())[0].hypothesis.function
        t = truth(kind, f, g)
        errors[stem] = max(abs(float(function.evaluate([x, y])) - t(x, y)) / t(x, y)
                           for x, y in BEYOND)
    json.dump(errors, sys.stdout)


def summary(errors, kind):
    e = [v for stem, v in errors.items() if stem.startswith(kind)]
    return (f"mean {100 * statistics.mean(e):7.3f}%  median {100 * statistics.median(e):7.3f}%  "
            f"within 0.1% {sum(v < 1e-3 for v in e):2}/{len(e)}  "
            f"within 5% {sum(v < 0.05 for v in e):2}/{len(e)}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lca", help="the lca binary")
    parser.add_argument("--venv", help="where to make the virtual environment")
    parser.add_argument("--noise", default="0,0.01,0.05", help="noise levels, comma separated")
    parser.add_argument("--seeds", default="1,2", help="seeds for each noisy level")
    parser.add_argument("--extrap-inside", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.extrap_inside:
        run_extrap_inside(args.extrap_inside)
        return
    lca = lca_binary(args.lca)
    work = tempfile.mkdtemp(prefix="extrap-truths-")
    python = extrap_python(args.venv or os.path.join(work, "venv"))
    print("Extra-P's test truths, 41 products and 41 sums on {2..32}^2; the worst relative miss "
          "at (64,64), (128,32), (32,128)")
    for noise in [float(n) for n in args.noise.split(",")]:
        for seed in [int(s) for s in args.seeds.split(",")] if noise else [0]:
            folder = os.path.join(work, f"noise{noise}-seed{seed}")
            write_files(folder, noise, seed)
            ours = lca_errors(lca, folder)
            theirs = json.loads(subprocess.run(
                [python, os.path.abspath(__file__), "--extrap-inside", folder],
                check=True, capture_output=True, text=True).stdout)
            for kind in ("products", "sums"):
                head = f"noise ±{100 * noise:g}% seed {seed} {kind:<8}"
                print(f"{head} lca     {summary(ours, kind)}")
                print(f"{head} Extra-P {summary(theirs, kind)}")


if __name__ == "__main__":
    main()
