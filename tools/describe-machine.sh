#!/bin/sh
# What a measurement ran on, for the scripts that measure on a lent machine
# (tools/real-core-study.sh, tools/device-checks.sh): date, cores, processor, memory, kernel,
# load, and lscpu's topology lines.
echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
echo "cores: $(nproc) online ($(getconf _NPROCESSORS_CONF) configured)"
grep -m1 'model name' /proc/cpuinfo
echo "memory: $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo)"
echo "kernel: $(uname -srm)"
echo "load before: $(cat /proc/loadavg)"
lscpu 2>/dev/null | grep -E '^(Thread|Core|Socket|NUMA node\(s\)|CPU max MHz)' || true
