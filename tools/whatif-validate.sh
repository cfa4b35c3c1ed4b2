#!/usr/bin/env bash
# The what-if replay (`pp whatif`, docs/whatif.md) against real runs of the configuration it
# predicts, on this machine (issue 20, item 3). For each case it measures the source
# configuration with a trace, predicts the target from that trace, and measures the target for
# real, R times each, alternating; it prints one Markdown row per case: the median measured and
# predicted wall times (from `pp -l` of the measured and of the predicted log) and the error.
#
#   tools/whatif-validate.sh [--reps R] [--only NAME]
#
# Cases (NAME: what is predicted):
#   rust-dp, rust-tp   the Rust fft2d (lca workload fft2d), 2 threads on 2 cores, regrouped onto
#                      one processor (--group 0,1); measured with `taskset -c 0`
#   rust-dp-cpu, rust-tp-cpu   the other way: 2 threads measured on one core (`taskset -c 0`),
#                      predicted with a processor each (--demand cpu); measured on 2 cores
#   omp-dp             the OpenMP fft2d (examples/openmp), 2 cores → 1; OMP_WAIT_POLICY=passive
#                      in both runs (the replay assumes waits that block, not spin)
#   omp-dp-cpu         the OpenMP fft2d, 1 core → 2, as rust-dp-cpu
#   mpi-regroup        the MPI fft2d with --transpose p2p, 2 ranks regrouped onto one core;
#                      Open MPI told to yield when idle (mpi_yield_when_idle) in both runs
#   mpi-tcp-64/128     the MPI fft2d with --transpose p2p, 2 ranks over shared memory
#                      (btl self,vader) predicted over TCP loopback (btl tcp,self) from a machine
#                      file calibrated with `pp calibrate --mpi` over TCP; measured over TCP
#
# Needs release builds (`cargo build --release`), `make -C examples/openmp` and `make -C examples/mpi` and the
# packages of tools/system-packages.sh; cases whose programs are missing are skipped, saying so.
# A quiet machine matters: anything else running disturbs both the traced source runs (their
# lost time becomes demand) and the measured target runs.
set -euo pipefail

reps=5
only=""
while [ $# -gt 0 ]; do
    case "$1" in
    --reps) reps="$2"; shift 2 ;;
    --only) only="$2"; shift 2 ;;
    -h | --help) sed -n '2,26p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "whatif-validate: unknown argument '$1' (try --help)" >&2; exit 2 ;;
    esac
done

root=$(cd "$(dirname "$0")/.." && pwd)
pp="$root/target/release/pp"
lca="$root/target/release/lca"
for exe in "$pp" "$lca"; do
    [ -x "$exe" ] || { echo "whatif-validate: $exe missing: run cargo build --release" >&2; exit 1; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

# wall LOG: the run's wall time (s) as pp -l reports it.
wall() { "$pp" -l "$1" 2>/dev/null | tr ' ' '\n' | sed -n 's/^wall=//p'; }

# median of the numbers on standard input
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "| case | what is predicted | measured (s): median (min–max) | predicted (s): median (min–max) | error of the medians |"
echo "|---|---|---|---|---|"

# case_ NAME DESCRIPTION WHATIF_OPTIONS :: SOURCE_CMD... :: TARGET_CMD...
# Each command writes its log to $PP_LOG.
case_() {
    local name="$1" what="$2" options="$3"
    shift 3
    [ -z "$only" ] || [ "$only" = "$name" ] || return 0
    [ "$1" = "::" ] && shift
    local source=() target=()
    while [ "$1" != "::" ]; do source+=("$1"); shift; done
    shift
    target=("$@")
    : >"$work/measured" && : >"$work/predicted"
    for r in $(seq "$reps"); do
        PP_LOG="$work/source.log" "${source[@]}" >/dev/null 2>"$work/err" ||
            { echo "| $name | $what | source run failed: $(tail -1 "$work/err") | | |"; return 0; }
        # shellcheck disable=SC2086 # options are words
        "$pp" whatif "$work/source.log" $options --out "$work/predicted.log" --force >/dev/null 2>"$work/err" ||
            { echo "| $name | $what | | pp whatif failed: $(tail -1 "$work/err") | |"; return 0; }
        wall "$work/predicted.log" >>"$work/predicted"
        rm -f "$work/predicted.log"
        PP_LOG="$work/target.log" "${target[@]}" >/dev/null 2>"$work/err" ||
            { echo "| $name | $what | target run failed: $(tail -1 "$work/err") | | |"; return 0; }
        wall "$work/target.log" >>"$work/measured"
    done
    local m p
    m="$(median <"$work/measured") $(sort -g "$work/measured" | sed -n '1p;$p' | tr '\n' ' ')"
    p="$(median <"$work/predicted") $(sort -g "$work/predicted" | sed -n '1p;$p' | tr '\n' ' ')"
    # shellcheck disable=SC2086 # three numbers each
    set -- $m $p
    awk -v n="$name" -v w="$what" -v m="$1" -v m0="$2" -v m1="$3" -v p="$4" -v p0="$5" -v p1="$6" 'BEGIN {
        e = (p - m) / m * 100
        printf "| %s | %s | %.4f (%.4f–%.4f) | %.4f (%.4f–%.4f) | %+.1f%% |\n", n, w, m, m0, m1, p, p0, p1, e }'
}

skip() { echo "| $1 | skipped: $2 | | | |"; }

# --- regrouping: two threads (ranks) on two cores, predicted on one ---
fft="$lca workload fft2d -n 256 --iters 100 -p 2"
# shellcheck disable=SC2086
case_ rust-dp "Rust fft2d dp, p=2, n=256: 2 cores → 1" "--group 0,1" \
    :: $fft --impl dp :: taskset -c 0 $fft --impl dp
# shellcheck disable=SC2086
case_ rust-tp "Rust fft2d tp, p=2, n=256: 2 cores → 1" "--group 0,1" \
    :: $fft --impl tp :: taskset -c 0 $fft --impl tp

# shellcheck disable=SC2086
case_ rust-dp-cpu "Rust fft2d dp, p=2, n=256: 1 core → 2" "--demand cpu" \
    :: taskset -c 0 $fft --impl dp :: $fft --impl dp
# shellcheck disable=SC2086
case_ rust-tp-cpu "Rust fft2d tp, p=2, n=256: 1 core → 2" "--demand cpu" \
    :: taskset -c 0 $fft --impl tp :: $fft --impl tp

omp="$root/examples/openmp/build/fft2d"
if [ -x "$omp" ]; then
    run=(env OMP_WAIT_POLICY=passive "$pp" run -- "$omp" --impl dp -p 2 -n 256)
    case_ omp-dp "OpenMP fft2d dp, p=2, n=256: 2 cores → 1" "--group 0,1" \
        :: "${run[@]}" :: taskset -c 0 "${run[@]}"
    case_ omp-dp-cpu "OpenMP fft2d dp, p=2, n=256: 1 core → 2" "--demand cpu" \
        :: taskset -c 0 "${run[@]}" :: "${run[@]}"
else
    skip omp-dp "$omp missing (make -C examples/openmp)"
fi

mpi="$root/examples/mpi/build/fft2d"
if [ -x "$mpi" ] && command -v mpirun >/dev/null; then
    run=("$pp" run -- mpirun --bind-to none --mca mpi_yield_when_idle 1 -np 2 "$mpi" --transpose p2p -n 128 --iters 200)
    case_ mpi-regroup "MPI fft2d p2p, 2 ranks, n=128: 2 cores → 1" "--group 0,1" \
        :: "${run[@]}" :: taskset -c 0 "${run[@]}"
    # --- network: shared memory → TCP loopback ---
    "$pp" calibrate --quick --mpi --mpirun "mpirun --mca btl tcp,self" --out "$work/tcp.toml" >/dev/null 2>&1
    for n in 64 128; do
        over() { echo "$pp" run -- mpirun --bind-to none --mca btl "$1" -np 2 "$mpi" --transpose p2p -n "$n" --iters 2000; }
        # shellcheck disable=SC2046
        case_ "mpi-tcp-$n" "MPI fft2d p2p, 2 ranks, n=$n: shared memory → TCP" \
            "--machine $work/tcp.toml" \
            :: $(over self,vader) :: $(over tcp,self)
    done
else
    skip mpi "$mpi or mpirun missing (make -C examples/mpi; tools/system-packages.sh)"
fi
