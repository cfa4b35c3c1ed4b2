#!/usr/bin/env bash
# Do the waits of an OpenMP program stay waits beside CPU hogs? (issue 34.) Runs three phases
# of examples/openmp/categories with 2 threads pinned to 2 cores, each with a designed loss:
#   serial     the initial thread works 300 ms alone          ip ≈ 0.300 s
#   imbalance  thread 0 works 40 ms, thread 1 160 ms          li ≈ 0.120 s
#   critical   241 rounds of 1 ms inside one critical section sl ≈ 0.241 s
# alone and beside two busy loops pinned to the same 2 cores, under OMP_WAIT_POLICY passive and
# active, R times each (alternating), and prints one Markdown row per case: the median of the
# designed category, its range, and the median rc.cpu.
#
#   tools/contention-check.sh PP CATEGORIES [REPS] [CORES]
#
# PP is a release pp with libpp_ompt.so beside it (or $PP_OMPT_LIBRARY); CATEGORIES is
# examples/openmp/build/categories (make -C examples/openmp); CORES the two cores to pin to
# (default 0,1). Needs taskset (util-linux).
set -euo pipefail
pp=$(realpath "$1")
prog=$(realpath "$2")
reps=${3:-5}
cores=${4:-0,1}
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT

hogs() { # two busy loops on the program's cores until killed
  for _ in 1 2; do taskset -c "$cores" sh -c 'while :; do :; done' & done
}
median() { sort -g | awk '{a[NR]=$1} END {m=(NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2; printf "%.4f %.4f %.4f\n", m, a[1], a[NR]}'; }

echo "| phase | designed | load | OMP_WAIT_POLICY | measured (median, range) | rc.cpu (median) |"
echo "|---|---|---|---|---|---|"
for phase in serial imbalance critical; do
  case $phase in
    serial) cat=ip; want=0.300 ;;
    imbalance) cat=li; want=0.120 ;;
    critical) cat=sl; want=0.241 ;;
  esac
  for load in alone hogs; do
    for policy in passive active; do
      : > "$work/values" ; : > "$work/rc"
      for r in $(seq "$reps"); do
        if [ "$load" = hogs ]; then hogs; fi
        line=$(OMP_WAIT_POLICY=$policy OMP_NUM_THREADS=2 "$pp" run -l --log "$work/pp.log" \
          -- taskset -c "$cores" "$prog" -p 2 --phase "$phase" 2> "$work/stderr") \
          || { echo "contention-check: $phase failed: $(tail -1 "$work/stderr")" >&2; exit 1; }
        if [ "$load" = hogs ]; then kill $(jobs -p) 2>/dev/null; wait 2>/dev/null || true; fi
        echo "$line" | tr ' ' '\n' | awk -F= -v c="$cat" '$1==c {print $2}' >> "$work/values"
        echo "$line" | tr ' ' '\n' | awk -F= '$1=="rc.cpu" {print $2}' >> "$work/rc"
      done
      read -r m lo hi < <(median < "$work/values")
      read -r rc _ _ < <(median < "$work/rc")
      echo "| $phase | $cat $want s | $load | $policy | $m s ($lo–$hi) | $rc s |"
    done
  done
done
