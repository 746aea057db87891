#!/bin/bash
# User and system CPU per get by id of the serving processes (/proc/<pid>/stat, no tracer attached),
# minor page faults and context switches of their main threads: the raw server, one process (w1),
# the workers of --workers 2 (w2), under wrk -t1 -c50 (docs/scaling.md "What a get costs the kernel").
# Under the bench lock: flock /tmp/bench.lock bench/get-cpu-split.sh raw 5
# usage: get-cpu-split.sh <raw|w1|w2> [seconds]
KIND=$1; SECS=${2:-5}
source "$(dirname "$0")/get-server.sh"

ut() { t=0; for p in $SRV; do t=$((t + $(awk '{print $14}' /proc/$p/stat))); done; echo $t; }
st() { t=0; for p in $SRV; do t=$((t + $(awk '{print $15}' /proc/$p/stat))); done; echo $t; }
mf() { t=0; for p in $SRV; do t=$((t + $(awk '{print $10}' /proc/$p/stat))); done; echo $t; }
cs() { t=0; for p in $SRV; do t=$((t + $(awk '/ctxt_switches/ {s+=$2} END {print s}' /proc/$p/status))); done; echo $t; }
U0=$(ut); S0=$(st); M0=$(mf); C0=$(cs)
OUT=$(wrk -t1 -c50 -d${SECS}s "$URL")
U1=$(ut); S1=$(st); M1=$(mf); C1=$(cs)
N=$(echo "$OUT" | grep -oP '\d+(?= requests in)')
RPS=$(echo "$OUT" | grep -oP 'Requests/sec:\s+\K[\d.]+')
TCK=$(getconf CLK_TCK)
echo "$KIND get: rps=$RPS n=$N server user_us/req=$(echo "($U1-$U0)*1000000/$TCK/$N" | bc -l | xargs printf %.1f) sys_us/req=$(echo "($S1-$S0)*1000000/$TCK/$N" | bc -l | xargs printf %.1f) minflt/req=$(echo "($M1-$M0)/$N" | bc -l | xargs printf %.3f) ctxsw/req=$(echo "($C1-$C0)/$N" | bc -l | xargs printf %.3f)"
