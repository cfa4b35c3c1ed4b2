#!/usr/bin/env bash
# A real single-node Slurm on this machine, for `lca study --dispatch slurm`'s tests and for
# trying it out (docs/slurm.md):
#
#   tools/slurm-local.sh start    install slurm-wlm and munge if missing, write the config,
#                                 start munged, slurmctld and slurmd, wait until the node is idle
#   tools/slurm-local.sh stop     stop the three daemons this script started
#   tools/slurm-local.sh status   say whether they run and what sinfo says
#
# Everything lives under the state folder, $LCA_SLURM_DIR (default /var/lib/lca-slurm):
# slurm.conf, the controller's state, slurmd's spool, the daemons' logs and pid files. Slurm's
# commands find the config through $SLURM_CONF (`export SLURM_CONF=$LCA_SLURM_DIR/slurm.conf`);
# when /etc/slurm/slurm.conf does not exist, `start` also links it there, so a plain `sbatch`
# works (an existing /etc/slurm/slurm.conf is never touched).
#
# The cluster: one node named `hostname -s` with this machine's CPUs and memory (`slurmd -C`),
# one partition `debug` (the default), CPUs handed out one by one (select/cons_tres, CR_CPU) so
# several jobs share the node, proctrack/linuxproc and task/none (no cgroups), no accounting
# (so no sacct). The daemons run as root, started directly (no systemd). Needs root: otherwise
# `start` prints what it would run and exits 1. Idempotent: `start` on a running cluster only
# checks that the node is up; `stop` when nothing runs does nothing.
set -uo pipefail

dir=${LCA_SLURM_DIR:-/var/lib/lca-slurm}
conf=$dir/slurm.conf
wait_s=${LCA_SLURM_WAIT_S:-60}
export SLURM_CONF=$conf

say() { echo "slurm-local: $*"; }

root() { [ "${EUID:-$(id -u)}" -eq 0 ]; }

# Installs slurm-wlm (slurmctld, slurmd, the client commands) and munge when missing, as
# tools/system-packages.sh does.
install() {
    local missing=()
    command -v slurmctld >/dev/null 2>&1 && command -v slurmd >/dev/null 2>&1 &&
        command -v sbatch >/dev/null 2>&1 || missing+=(slurm-wlm)
    command -v munged >/dev/null 2>&1 || missing+=(munge)
    [ ${#missing[@]} -eq 0 ] && return 0
    local cmd=(env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}")
    if ! root || ! command -v apt-get >/dev/null 2>&1; then
        local why="not root"
        command -v apt-get >/dev/null 2>&1 || why="no apt-get"
        say "${missing[*]}: missing; would run (as root): ${cmd[*]:1} ($why)"
        return 1
    fi
    say "installing ${missing[*]}"
    "${cmd[@]}" || { apt-get update && "${cmd[@]}"; } || {
        say "could not install ${missing[*]}"
        return 1
    }
}

# The pid in a pid file, if that process is alive.
alive() {
    local pid
    pid=$(cat "$1" 2>/dev/null) || return 1
    [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && echo "$pid"
}

write_conf() {
    local host node
    host=$(hostname -s)
    # NodeName=HOST CPUs=.. Boards=.. SocketsPerBoard=.. CoresPerSocket=.. ThreadsPerCore=..
    # RealMemory=..: what slurmd finds, so it never disagrees with the config.
    node=$(slurmd -C | head -n 1) || return 1
    mkdir -p "$dir/state" "$dir/spool" "$dir/log" || return 1
    cat >"$conf.tmp" <<EOF
# Written by lca's tools/slurm-local.sh: a single-node cluster on $host.
ClusterName=lca
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
MpiDefault=none
ReturnToService=2
MaxArraySize=100001
$node State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
    mv "$conf.tmp" "$conf"
    if [ ! -e /etc/slurm/slurm.conf ] && [ ! -L /etc/slurm/slurm.conf ]; then
        mkdir -p /etc/slurm && ln -s "$conf" /etc/slurm/slurm.conf
    fi
}

start_munge() {
    if pgrep -x munged >/dev/null 2>&1 && munge -n >/dev/null 2>&1; then
        return 0
    fi
    if [ ! -s /etc/munge/munge.key ]; then
        say "creating the munge key /etc/munge/munge.key"
        mkdir -p /etc/munge
        if command -v mungekey >/dev/null 2>&1; then
            mungekey --create --keyfile=/etc/munge/munge.key || return 1
        else
            dd if=/dev/urandom of=/etc/munge/munge.key bs=1 count=1024 status=none || return 1
        fi
        chown munge:munge /etc/munge/munge.key 2>/dev/null
        chmod 400 /etc/munge/munge.key
    fi
    mkdir -p /run/munge /var/log/munge /var/lib/munge
    chown munge:munge /run/munge /var/log/munge /var/lib/munge 2>/dev/null
    if id munge >/dev/null 2>&1; then
        runuser -u munge -- munged || return 1
    else
        munged --force || return 1
    fi
    local i
    for i in $(seq 50); do
        munge -n >/dev/null 2>&1 && return 0
        sleep 0.1
    done
    say "munged started but does not answer (munge -n)"
    return 1
}

# Whether sinfo shows the node idle (or mixed/allocated: up and taking jobs).
node_up() {
    local state
    state=$(sinfo -h -N -o '%t' 2>/dev/null | head -n 1)
    case "$state" in
    idle | mix | alloc | comp) return 0 ;;
    *) return 1 ;;
    esac
}

start() {
    install || exit 1
    if ! root; then
        say "needs root to start the daemons; would write $conf and start munged, slurmctld and slurmd (not root)"
        exit 1
    fi
    if alive "$dir/slurmctld.pid" >/dev/null && alive "$dir/slurmd.pid" >/dev/null && node_up; then
        say "already running (SLURM_CONF=$conf)"
        exit 0
    fi
    write_conf || { say "cannot write $conf"; exit 1; }
    start_munge || { say "cannot start munged"; exit 1; }
    alive "$dir/slurmctld.pid" >/dev/null || slurmctld -f "$conf" || {
        say "slurmctld did not start; see $dir/log/slurmctld.log"
        exit 1
    }
    alive "$dir/slurmd.pid" >/dev/null || slurmd -f "$conf" || {
        say "slurmd did not start; see $dir/log/slurmd.log"
        exit 1
    }
    local begun=$SECONDS
    while ! node_up; do
        if [ $((SECONDS - begun)) -ge "$wait_s" ]; then
            say "the node is not idle after ${wait_s} s: sinfo says '$(sinfo -h -N -o '%t %E' 2>&1 | head -n 1)'; see $dir/log/"
            exit 1
        fi
        # A node left down by an earlier, unclean stop comes back.
        scontrol update nodename="$(hostname -s)" state=resume >/dev/null 2>&1
        sleep 0.5
    done
    say "running: node $(hostname -s) idle in partition debug; export SLURM_CONF=$conf"
}

stop_one() {
    local name=$1 pid
    pid=$(alive "$dir/$name.pid") || return 0
    kill "$pid"
    local i
    for i in $(seq 100); do
        kill -0 "$pid" 2>/dev/null || { say "stopped $name ($pid)"; return 0; }
        sleep 0.1
    done
    kill -KILL "$pid" 2>/dev/null
    say "killed $name ($pid): it did not end within 10 s of SIGTERM"
}

stop() {
    root || { say "needs root to stop the daemons"; exit 1; }
    stop_one slurmd
    stop_one slurmctld
    # munged is shared with anything else using munge: stopped only when this script's
    # cluster was its only user is unknowable, so it is stopped only when asked to.
    if [ "${LCA_SLURM_STOP_MUNGE:-0}" = 1 ] && pgrep -x munged >/dev/null 2>&1; then
        kill "$(pgrep -x munged)" && say "stopped munged"
    fi
}

status() {
    local ok=0 d
    for d in slurmctld slurmd; do
        if pid=$(alive "$dir/$d.pid"); then say "$d: running ($pid)"; else say "$d: not running"; ok=1; fi
    done
    if pgrep -x munged >/dev/null 2>&1; then say "munged: running"; else say "munged: not running"; ok=1; fi
    [ $ok -eq 0 ] && sinfo 2>&1
    return $ok
}

case "${1:-}" in
start) start ;;
stop) stop ;;
status) status ;;
*)
    echo "usage: tools/slurm-local.sh start|stop|status" >&2
    exit 2
    ;;
esac
