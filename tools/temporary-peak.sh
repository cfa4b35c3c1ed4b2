#!/bin/bash
# Usage: tools/temporary-peak.sh COMMAND [ARGS...]
# Runs COMMAND and prints the peak size of its unnamed temporary files (the deleted files it
# holds open, as pp whatif's and pp critical-path's spills are), summed from /proc/PID/fd every
# 20 ms: the disk a command needs besides its input and output (docs/whatif.md#cost). An
# output being written is an unnamed file too where the file system allows (O_TMPFILE: its
# link reads "DIR/#INODE (deleted)", docs/guarantees.md); it is left out. The command's own
# output is discarded; its exit status is kept.
set -u
"$@" > /dev/null 2>&1 &
pid=$!
peak=0
while kill -0 "$pid" 2> /dev/null; do
    sum=0
    for fd in /proc/"$pid"/fd/*; do
        case "$(readlink "$fd" 2> /dev/null)" in
            */"#"[0-9]*" (deleted)") ;;
            *"(deleted)"*) sum=$((sum + $(stat -L -c %s "$fd" 2> /dev/null || echo 0))) ;;
        esac
    done
    [ "$sum" -gt "$peak" ] && peak=$sum
    sleep 0.02
done
wait "$pid"
rc=$?
echo "peak temporary bytes: $peak"
exit $rc
