#!/usr/bin/env bash
# The checks that need more cores than the project's 2-core VM, in one run that fits a lent
# machine's few minutes (issues 36 and 37; issue 33's studies are tools/real-core-study.sh).
# Needs only release binaries of `pp` and `lca` (no Rust: `lca workload fft2d` is the program):
#
#   tools/device-checks.sh PP LCA OUTDIR
#
# 1. Throughput (issue 37, item 2): a log of about 10^7 events from `lca workload fft2d` on
#    PMAX threads, then `pp -l`, `pp critical-path` and `pp whatif --group` (pairs of threads
#    on one processor) with PP_THREADS = 1, 2, 4, 8, 16 (up to the cores), ROUNDS rounds in
#    turn; the I/O floor (`cat` of the log). OUTDIR/throughput.csv: command, threads, round,
#    wall and CPU seconds, peak resident KiB, events.
# 2. PACE past the data on dedicated cores (issue 36, item 4): the study of n = 64, 256 and
#    p = 2..PMAX (3 replicates, both implementations); `lca pace build --cores CORES` from
#    p <= 4, and the flat model (`lca model`) from the same runs; both validated at p >= 5.
# 3. The hardware layer swapped (issue 36, item 4): the same study at p = 2..8 under
#    `taskset -c 0-3`, predicted by the models of 2. with `cores = 4`.
#
# OUTDIR/results.txt says what each step printed (its validation tables whole); machine.txt
# describes the machine; details.tar.gz holds the datafiles, the models and the builders'
# notes. Environment (for a trial on a small machine): PMAX (default: the cores, at most 16),
# ITERS (the throughput log's iterations, default 30000), ROUNDS (default 3), STUDY_S (each
# study's time limit, default 150).
set -uo pipefail
pp=$(realpath "$1")
lca=$(realpath "$2")
out=$(realpath -m "$3")
cores=$(nproc)
pmax=${PMAX:-$((cores < 16 ? cores : 16))}
iters=${ITERS:-30000}
rounds=${ROUNDS:-3}
study_s=${STUDY_S:-150}
here=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"
work=$(mktemp -d)
results="$out/results.txt"
: > "$results"
say() { echo "$@" | tee -a "$results"; }

"$here/tools/describe-machine.sh" > "$out/machine.txt"

# One command timed: wall from the clock, CPU (user + system) and peak resident from the
# kernel's accounting of the finished child (/usr/bin/time where there is one).
measure() {
  local start end
  if [ -x /usr/bin/time ]; then
    start=$(date +%s%N)
    /usr/bin/time -f '%U %S %M' -o "$work/time" "$@" > /dev/null 2> "$work/err"
    end=$(date +%s%N)
    read -r user sys rss < "$work/time"
  else
    local t0 t1
    t0=$(awk '{print $14 + $15 + $16 + $17}' /proc/$$/stat)
    start=$(date +%s%N)
    "$@" > /dev/null 2> "$work/err"
    end=$(date +%s%N)
    t1=$(awk '{print $14 + $15 + $16 + $17}' /proc/$$/stat)
    user=$(awk -v a="$t0" -v b="$t1" -v hz="$(getconf CLK_TCK)" 'BEGIN {print (b - a) / hz}')
    sys=0
    rss=
  fi
  wall=$(awk -v a="$start" -v b="$end" 'BEGIN {printf "%.3f", (b - a) / 1e9}')
  cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN {printf "%.3f", u + s}')
}

# 1. Throughput.
log="$work/big.ppb"
say "== throughput: lca workload fft2d -p $pmax -n 16 --iters $iters"
PP_LOG="$log" "$lca" workload fft2d -p "$pmax" -n 16 --iters "$iters" --impl dp > "$work/workload.txt" 2>&1
cat "$work/workload.txt" >> "$results"
events=$(grep -o '([0-9]* events)' "$work/workload.txt" | tr -dc 0-9)
groups=$(seq 0 2 $((pmax - 1)) | awk -v p="$pmax" '{printf "%s%d%s", (NR > 1 ? "/" : ""), $1, ($1 + 1 < p ? "," $1 + 1 : "")}')
threads=$(for t in 1 2 4 8 16; do [ "$t" -le "$cores" ] && echo "$t"; done)
echo "command,threads,round,wall_s,cpu_s,peak_kib,events" > "$out/throughput.csv"
measure cat "$log"
echo "cat,1,1,$wall,$cpu,$rss,$events" >> "$out/throughput.csv"
for r in $(seq "$rounds"); do
  for t in $threads; do
    for c in l critical-path whatif; do
      case $c in
        l) set -- "$pp" -l "$log" ;;
        critical-path) set -- "$pp" critical-path "$log" ;;
        whatif) set -- "$pp" whatif "$log" --group "$groups" --out "$work/pred.ppb" --force ;;
      esac
      PP_THREADS=$t measure "$@"
      echo "$c,$t,$r,$wall,$cpu,$rss,$events" >> "$out/throughput.csv"
    done
  done
done
say "throughput: $(($(wc -l < "$out/throughput.csv") - 1)) timings of a $events-event log in throughput.csv"
rm -f "$log" "$work/pred.ppb"

# 2. PACE past the data, and 3. the hardware layer swapped.
study() { # NAME PMAX [PREFIX...]: the study's folder is $work/NAME/study-NAME
  local name=$1 top=$2
  shift 2
  mkdir -p "$work/$name"
  cat > "$work/$name/study.toml" << EOF
name = "$name"
design = "full"
replicates = 3
timeout_s = 60

[factors]
n = "64,256"
p = "2..$top:lin:$((top - 1))"

[[implementation]]
name = "dp"
command = [$(for a in "$@"; do printf '"%s", ' "$a"; done)"{lca}", "workload", "fft2d", "--impl", "dp", "-p", "{p}", "-n", "{n}", "--iters", "1000"]

[[implementation]]
name = "tp"
command = [$(for a in "$@"; do printf '"%s", ' "$a"; done)"{lca}", "workload", "fft2d", "--impl", "tp", "-p", "{p}", "-n", "{n}", "--iters", "1000"]
EOF
  local start end status
  start=$(date +%s)
  (cd "$work/$name" && timeout -s INT "$study_s" "$lca" study study.toml > study.out 2>&1)
  status=$?
  end=$(date +%s)
  say "== study $name (p = 2..$top${1:+, under $*}): exit $status, $((end - start)) s, load $(cut -d' ' -f1-3 /proc/loadavg)"
  grep -E '^(impl|dp|tp|noise|note|verdict)' "$work/$name/study.out" >> "$results"
}
study dedicated "$pmax"
data="$work/dedicated/study-dedicated/dedicated.dat"
for i in dp tp; do
  say "== $i: lca pace build --cores $cores from p <= 4"
  "$lca" pace build "$work/dedicated/study-dedicated" --impl "$i" --cores "$cores" --where 'p<=4' \
    -o "$work/pace-$i.toml" --force > "$work/build-$i.txt" 2>&1
  tail -1 "$work/build-$i.txt" >> "$results"
  "$lca" model "$data" --where "impl=$i,p<=4" -o "$work/flat-$i.toml" > "$work/flat-$i.txt" 2>&1
  for m in pace flat; do
    say "-- $i $m model at p >= 5 (held out)"
    "$lca" validate "$work/$m-$i.toml" "$data" --where "impl=$i,p>=5" >> "$results" 2>&1
  done
done
if [ "$cores" -ge 8 ]; then
  study four-cores 8 taskset -c 0-3
  data4="$work/four-cores/study-four-cores/four-cores.dat"
  for i in dp tp; do
    sed 's/^cores = .*/cores = 4/' "$work/pace-$i.toml" > "$work/pace4-$i.toml"
    say "-- $i pace model with cores = 4, against runs under taskset -c 0-3"
    "$lca" validate "$work/pace4-$i.toml" "$data4" --where "impl=$i" >> "$results" 2>&1
  done
else
  say "== four-cores: skipped ($cores cores: it needs 8 or more)"
fi
echo "load after: $(cat /proc/loadavg)" >> "$out/machine.txt"
(cd "$work" && tar -czf "$out/details.tar.gz" --exclude=logs --exclude=report ./*.toml ./*.txt \
  dedicated/study.out dedicated/study-dedicated four-cores/study.out four-cores/study-four-cores \
  2> /dev/null)
rm -rf "$work"
say "done: $out"
