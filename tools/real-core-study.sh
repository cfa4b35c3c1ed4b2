#!/usr/bin/env bash
# The fft2d studies on a machine with many dedicated cores (issue 33, item 8): the bundled
# larger study (datasets/studies/fft2d-full.toml, p = 2..8) and the full grid up to p = 16
# (datasets/studies/fft2d-16core.toml), one after the other, each from a fresh output folder.
# machine.txt describes the machine.
#
#   tools/real-core-study.sh LCA_BINARY OUTDIR [SECONDS_PER_STUDY]
#
# Runs with a release `lca` (it carries the workload as `lca workload fft2d`), no Rust needed on
# the machine. Writes OUTDIR/{fft2d-full,fft2d-16core}.dat, OUTDIR/machine.txt,
# OUTDIR/summary.txt (what `lca study` printed) and OUTDIR/studies.tar.gz (the output folders
# without their logs, which run to tens of MB). A study cut off by its time limit keeps the
# rows it has (a study resumes: run `lca study` on it again to finish it).
set -uo pipefail
lca=$(realpath "$1")
out=$(realpath -m "$2")
limit=${3:-300}
here=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"
work=$(mktemp -d)
"$here/tools/describe-machine.sh" > "$out/machine.txt"
for study in fft2d-full fft2d-16core; do
  mkdir -p "$work/$study/datasets/data"
  sed -e "s|^out = .*|out = \"study\"|" \
      -e "s|^datafile = .*|datafile = \"datasets/data/$study.dat\"|" \
      "$here/datasets/studies/$study.toml" > "$work/$study/study.toml"
  start=$(date +%s%N)
  (cd "$work/$study" && timeout -s INT "$limit" "$lca" study study.toml) \
    > "$out/$study.summary.txt" 2>&1
  status=$?
  end=$(date +%s%N)
  {
    echo "== $study: exit $status, $(( (end - start) / 1000000 )) ms"
    cat "$out/$study.summary.txt"
  } >> "$out/summary.txt"
  rm "$out/$study.summary.txt"
  cp "$work/$study/datasets/data/$study.dat" "$out/" 2>/dev/null || true
done
echo "load after: $(cat /proc/loadavg)" >> "$out/machine.txt"
tar -C "$work" --exclude=logs -czf "$out/studies.tar.gz" fft2d-full/study fft2d-16core/study 2>/dev/null || true
rm -rf "$work"
