#!/usr/bin/env bash
# Does a rayon program's idle waiting keep its category beside CPU hogs? (the lead's issue 36
# finding; docs/attribution.md, "Contention during waits".) Runs fft2d configurations alone
# ("idle") and beside two busy loops ("hog"), alternating, ROUNDS times, keeps the logs in OUT,
# then attributes every log with each PP given and prints, per PP, configuration and load, the
# median and range of each category in processor-seconds.
#
#   tools/fft2d-hogs-check.sh FFT2D OUT ROUNDS "impl:p:n:iters ..." PP...
#
# e.g. tools/fft2d-hogs-check.sh target/release/fft2d /tmp/hogs 3 "dp:2:256:300 tp:4:256:150" \
#        /path/to/old/pp target/release/pp
# Only the hogs are killed at the end (by their ids). The machine's own load goes into the
# figures: say it (uptime) with them.
set -euo pipefail
fft=$(realpath "$1"); out=$2; rounds=$3; configs=$4; shift 4
mkdir -p "$out"
: > "$out/runs.txt"
for r in $(seq 1 "$rounds"); do
  for c in $configs; do
    IFS=: read -r impl p n iters <<< "$c"
    for cond in idle hog; do
      hogs=()
      if [ "$cond" = hog ]; then
        for _ in 1 2; do sh -c 'while :; do :; done' & hogs+=($!); done
        sleep 0.5
      fi
      load=$(cut -d' ' -f1 /proc/loadavg)
      log=$out/$impl-p$p-n$n-$cond-r$r.log
      PP_LOG=$log "$fft" -p "$p" -n "$n" --impl "$impl" --iters "$iters" > /dev/null
      for h in "${hogs[@]}"; do kill "$h"; done
      wait 2> /dev/null || true
      echo "$log $impl-p$p-n$n $cond $load" >> "$out/runs.txt"
      sleep 1
    done
  done
done
for pp in "$@"; do
  echo "== $pp"
  echo "| config | runs | load | wall | li | ip | sl | cl | rc.cpu | pc |"
  echo "|---|---|---|---|---|---|---|---|---|---|"
  while read -r log cfg cond load; do
    echo "$cfg $cond $load $("$pp" -l "$log" 2> /dev/null)"
  done < "$out/runs.txt" | awk '
    { key = $1 " " $2; n[key]++
      if (n[key] == 1 || $3 + 0 < lo[key] + 0) lo[key] = $3
      if (n[key] == 1 || $3 + 0 > hi[key] + 0) hi[key] = $3
      for (i = 4; i <= NF; i++) { split($i, kv, "="); v[key, kv[1], n[key]] = kv[2] } }
    function med(key, c,   a, k, m, j, t) {
      m = n[key]; for (k = 1; k <= m; k++) a[k] = v[key, c, k] + 0
      for (k = 1; k <= m; k++) for (j = k + 1; j <= m; j++) if (a[j] < a[k]) { t = a[k]; a[k] = a[j]; a[j] = t }
      return sprintf("%.3f [%.3f, %.3f]", (m % 2) ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2, a[1], a[m]) }
    END { for (key in n) { printf "| %s | %d | %s-%s", key, n[key], lo[key], hi[key]
        split("wall li ip sl cl rc.cpu pc", cs, " "); for (k = 1; k <= 7; k++) printf " | %s", med(key, cs[k]); print " |" } }' | sort
done
