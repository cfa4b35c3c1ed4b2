#!/usr/bin/env bash
# Records the logs of pp/tests/data/hogs/: each designed phase of examples/openmp/categories
# (serial: ip, imbalance: li, critical: sl; see tools/contention-check.sh) with 2 threads on
# cores 0 and 1, alone and beside two busy loops on the same cores, OMP_WAIT_POLICY=passive.
#
#   tools/hog-logs.sh PP CATEGORIES DIR
#
# PP is pp with libpp_ompt.so beside it; CATEGORIES is examples/openmp/build/categories
# (make -C examples/openmp). Writes DIR/<phase>-<alone|hogs>.log and prints each run's row.
set -euo pipefail
pp=$(realpath "$1")
prog=$(realpath "$2")
dir=$3
mkdir -p "$dir"
trap 'kill $(jobs -p) 2>/dev/null || true' EXIT
for phase in serial imbalance critical; do
  for load in alone hogs; do
    if [ "$load" = hogs ]; then
      for _ in 1 2; do taskset -c 0,1 sh -c 'while :; do :; done' & done
    fi
    row=$(OMP_WAIT_POLICY=passive OMP_NUM_THREADS=2 "$pp" run -l --log "$dir/$phase-$load.log" \
      -- taskset -c 0,1 "$prog" -p 2 --phase "$phase")
    if [ "$load" = hogs ]; then kill $(jobs -p); wait 2>/dev/null || true; fi
    echo "$phase $load: $row"
  done
done
