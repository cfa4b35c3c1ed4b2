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
(docs/results.md#against-extra-p). With --params 3, the truths of its three-parameter tests
(`test_modeling_3p`, `test_modeling_3p_plus`, `test_modeling_3p_mul_plus`: 200 + 10 f g h,
200 + 10 f + 20 g + 30 h and 200 + 100 f(x) + 2 g(y) h(z), for 40 consecutive triples of terms)
on {2, 4, 8, 16, 32}^3, predicted at (64, 64, 64), (64, 16, 2) and (2, 64, 16).

Extra-P is installed with pip into a throw-away virtual environment (--venv, default a
temporary folder), as compare.py does; lca is the binary given by --lca (default: the newer of
target/release/lca and target/debug/lca).

  python3 tools/extrap-compare/own_truths.py [--lca target/release/lca] [--venv DIR]
      [--noise 0,0.01,0.05] [--seeds 1,2] [--params 2|3] [--design grid|cross]
"""

import argparse
import glob
import itertools
import json
import math
import os
import random
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
# The points predicted beyond the grid, by number of parameters (extrap_truths.rs's for three).
BEYOND = {2: [(64, 64), (128, 32), (32, 128)],
          3: [(64, 64, 64), (64, 16, 2), (2, 64, 16)]}
# The kinds of truth: Extra-P's test_modeling, test_modeling_plus (two parameters) and
# test_modeling_3p, test_modeling_3p_plus, test_modeling_3p_mul_plus (three).
KINDS = {2: ("products", "sums"), 3: ("products3", "sums3", "mixed3")}


def term(e, x):
    a, b, c = e
    return x ** (a / b) * math.log2(x) ** c


def truth(kind, terms):
    """The function of the point's coordinates that a case's values are made from."""
    if kind == "products":
        return lambda v: 200 + 10 * term(terms[0], v[0]) * term(terms[1], v[1])
    if kind == "sums":
        return lambda v: 200 + 10 * term(terms[0], v[0]) + 20 * term(terms[1], v[1])
    t = [lambda v, i=i: term(terms[i], v[i]) for i in range(3)]
    if kind == "products3":
        return lambda v: 200 + 10 * t[0](v) * t[1](v) * t[2](v)
    if kind == "sums3":
        return lambda v: 200 + 10 * t[0](v) + 20 * t[1](v) + 30 * t[2](v)
    return lambda v: 200 + 100 * t[0](v) + 2 * t[1](v) * t[2](v)


def cases(params):
    """(kind, terms, file stem) for every truth of `params` parameters: consecutive terms."""
    for kind in KINDS[params]:
        for terms in zip(*(TERMS[i:] for i in range(params))):
            yield kind, terms, "_".join([kind] + [str(n) for t in terms for n in t])


def parse_stem(stem):
    kind, *numbers = stem.split("_")
    numbers = list(map(int, numbers))
    return kind, [tuple(numbers[i:i + 3]) for i in range(0, len(numbers), 3)]


def names(params):
    return ["x", "y", "z"][:params]


def design(params, name):
    """The grid's points, or only those of its cross: each parameter varied alone from the
    least point (Extra-P's sparse layout)."""
    grid = itertools.product(GRID, repeat=params)
    if name == "grid":
        return list(grid)
    return [v for v in grid if sum(x != GRID[0] for x in v) <= 1]


def write_files(folder, params, noise, seed, layout="grid"):
    rng = random.Random(seed)
    os.makedirs(folder, exist_ok=True)
    for kind, terms, stem in cases(params):
        t = truth(kind, terms)
        reps = 3 if noise else 1
        points = [{"point": list(v),
                   "values": [t(v) * (1 + rng.uniform(-noise, noise)) for _ in range(reps)]}
                  for v in design(params, layout)]
        doc = {"parameters": names(params), "measurements": {"r": {"m": points}}}
        with open(os.path.join(folder, stem + ".json"), "w") as out:
            json.dump(doc, out)


def lca_errors(lca, folder):
    errors = {}
    for path in sorted(glob.glob(os.path.join(folder, "*.json"))):
        stem = os.path.basename(path)[:-5]
        kind, terms = parse_stem(stem)
        beyond = BEYOND[len(terms)]
        model = os.path.join(folder, stem + ".toml")
        done = subprocess.run([lca, "model", path, "-o", model, "--force"],
                              capture_output=True, text=True)
        if done.returncode != 0:
            sys.exit(f"lca model {path}: {done.stderr.strip()}")
        at = []
        for v in beyond:
            at += ["--at", ",".join(f"{n}={x}" for n, x in zip(names(len(v)), v))]
        out = subprocess.run([lca, "predict", model, "--format", "csv"] + at,
                             check=True, capture_output=True, text=True).stdout
        rows = [r.split(",") for r in out.strip().splitlines()]
        column = rows[0].index("r [m]")
        t = truth(kind, terms)
        errors[stem] = max(abs(float(r[column]) - t(v)) / t(v) for r, v in zip(rows[1:], beyond))
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
        kind, terms = parse_stem(stem)
        experiment = JsonFileReader().read_experiment(path)
        generator = ModelGenerator(experiment)
        generator.model_all()
        function = list(generator.models.values())[0].hypothesis.function
        t = truth(kind, terms)
        errors[stem] = max(abs(float(function.evaluate(list(v))) - t(v)) / t(v)
                           for v in BEYOND[len(terms)])
    json.dump(errors, sys.stdout)


def summary(errors, kind):
    e = [v for stem, v in errors.items() if stem.split("_")[0] == kind]
    return (f"mean {100 * statistics.mean(e):7.3f}%  median {100 * statistics.median(e):7.3f}%  "
            f"within 0.1% {sum(v < 1e-3 for v in e):2}/{len(e)}  "
            f"within 5% {sum(v < 0.05 for v in e):2}/{len(e)}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lca", help="the lca binary")
    parser.add_argument("--venv", help="where to make the virtual environment")
    parser.add_argument("--noise", default="0,0.01,0.05", help="noise levels, comma separated")
    parser.add_argument("--seeds", default="1,2", help="seeds for each noisy level")
    parser.add_argument("--params", type=int, choices=(2, 3), default=2,
                        help="the two-parameter truths (82) or the three-parameter ones (120)")
    parser.add_argument("--design", choices=("grid", "cross"), default="grid",
                        help="measure the whole grid, or only its cross (each parameter "
                             "varied alone from the least point)")
    parser.add_argument("--extrap-inside", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.extrap_inside:
        run_extrap_inside(args.extrap_inside)
        return
    lca = lca_binary(args.lca)
    work = tempfile.mkdtemp(prefix="extrap-truths-")
    python = extrap_python(args.venv or os.path.join(work, "venv"))
    if args.params == 2:
        print("Extra-P's test truths, 41 products and 41 sums on {2..32}^2; the worst relative "
              "miss at (64,64), (128,32), (32,128)")
    else:
        print("Extra-P's test truths, 40 products, 40 sums and 40 of 200 + 100 f(x) + 2 g(y) h(z) "
              "on {2..32}^3; the worst relative miss at (64,64,64), (64,16,2), (2,64,16)")
    if args.design == "cross":
        print("measured on the cross only: each parameter varied alone from the least point")
    for noise in [float(n) for n in args.noise.split(",")]:
        for seed in [int(s) for s in args.seeds.split(",")] if noise else [0]:
            folder = os.path.join(work, f"p{args.params}-{args.design}-noise{noise}-seed{seed}")
            write_files(folder, args.params, noise, seed, args.design)
            ours = lca_errors(lca, folder)
            theirs = json.loads(subprocess.run(
                [python, os.path.abspath(__file__), "--extrap-inside", folder],
                check=True, capture_output=True, text=True).stdout)
            for kind in KINDS[args.params]:
                head = f"noise ±{100 * noise:g}% seed {seed} {kind:<9}"
                print(f"{head} lca     {summary(ours, kind)}")
                print(f"{head} Extra-P {summary(theirs, kind)}")


if __name__ == "__main__":
    main()
