"""What compare.py and own_truths.py both need: the lca binary to run, and a Python with
Extra-P installed in a virtual environment of its own."""

import os
import subprocess
import sys


def lca_binary(given):
    """`given` (--lca), else the newer of target/release/lca and target/debug/lca."""
    built = [b for b in ("target/release/lca", "target/debug/lca") if os.path.exists(b)]
    lca = given or max(built, key=os.path.getmtime, default=None)
    if lca is None:
        sys.exit("no lca binary: build it (cargo build --release -p lca) or give --lca")
    return lca


def extrap_python(venv):
    """The Python of the virtual environment `venv`, made and given Extra-P (pip) if needed."""
    python = os.path.join(venv, "bin", "python")
    if not os.path.exists(python):
        subprocess.run([sys.executable, "-m", "venv", venv], check=True)
        subprocess.run([python, "-m", "pip", "install", "--quiet", "extrap"], check=True)
    return python
