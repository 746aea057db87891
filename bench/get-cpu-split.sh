#!/bin/bash
# User and system CPU per get by id of the serving processes (/proc/<pid>/stat, no tracer attached),
# minor page faults and context switches of their main threads: the raw server, one process (w1),
# the workers of --workers 2 (w2), under wrk -t1 -c50 (docs/scaling.md "What a get costs the kernel").
# Under the bench lock: flock /tmp/bench.lock bench/get-cpu-split.sh raw 5
# usage: get-cpu-split.sh <raw|w1|w2> [seconds]
KIND=$1; SECS=${2:-5}
CO=$(cd "$(dirname "$0")/.." && pwd)
PORT=$((20000 + RANDOM % 20000))
DATA=$(mktemp -d /tmp/tb-sys-XXXX)
cd $CO
export JWT_SECRET=$(head -c32 /dev/urandom | xxd -p -c64) PASSWORD_SECRET=$(head -c32 /dev/urandom | xxd -p -c64) LOG_LEVEL=warn TABLEBASE_RUN=dist
if [ $KIND = raw ]; then
  node --import tsx bench/raw-server.ts $DATA/raw.sqlite $PORT >/dev/null 2>&1 & PID=$!
else
  W=${KIND#w}
  node bin/tablebase.mjs serve --project examples/bench --data $DATA --host 127.0.0.1 --port $PORT --workers $W >/dev/null 2>&1 & PID=$!
fi
for i in $(seq 150); do curl -sf http://127.0.0.1:$PORT/health >/dev/null && break; sleep 0.2; done
ID=$(curl -s -XPOST -H 'content-type: application/json' -d '{"table":"items","object":{"title":"x","n":1}}' http://127.0.0.1:$PORT/db | sed 's/.*"id":"\([^"]*\)".*/\1/')
URL="http://127.0.0.1:$PORT/db?body=%7B%22table%22%3A%22items%22%2C%22where%22%3A%7B%22id%22%3A%7B%22eq%22%3A%22$ID%22%7D%7D%7D"
curl -si "$URL" > /dev/null
wrk -t1 -c50 -d2s "$URL" >/dev/null
# the processes that serve HTTP: raw / single process: PID; w2: the workers
if [ $KIND = w2 ]; then SRV=$(ps -o pid= --ppid $PID | tr -d ' ' | tr '\n' ' '); else SRV=$PID; fi
PIDS=$(echo $SRV | tr ' ' ',')

ut() { t=0; for p in $SRV; do t=$((t + $(awk '{print $14}' /proc/$p/stat))); done; echo $t; }
st() { t=0; for p in $SRV; do t=$((t + $(awk '{print $15}' /proc/$p/stat))); done; echo $t; }
mf() { t=0; for p in $SRV; do t=$((t + $(awk '{print $10}' /proc/$p/stat))); done; echo $t; }
cs() { t=0; for p in $SRV; do t=$((t + $(awk '/ctxt_switches/ {s+=$2} END {print s}' /proc/$p/status))); done; echo $t; }
U0=$(ut); S0=$(st); M0=$(mf); C0=$(cs)
OUT=$(wrk -t1 -c50 -d${SECS}s "$URL")
U1=$(ut); S1=$(st); M1=$(mf); C1=$(cs)
N=$(echo "$OUT" | grep -oP '\d+(?= requests in)')
RPS=$(echo "$OUT" | grep -oP 'Requests/sec:\s+\K[\d.]+')
per() { awk -F, -v n=$N -v e=$1 '$3==e {printf "%.2f", $1/n}' $2; }
seg() { echo "$NS" | awk -v n=$N -v k=$1 '$1==k {printf "%.2f", $2/n}'; }
TCK=$(getconf CLK_TCK)
echo "$KIND get: rps=$RPS n=$N server user_us/req=$(echo "($U1-$U0)*1000000/$TCK/$N" | bc -l | xargs printf %.1f) sys_us/req=$(echo "($S1-$S0)*1000000/$TCK/$N" | bc -l | xargs printf %.1f) minflt/req=$(echo "($M1-$M0)/$N" | bc -l | xargs printf %.3f) ctxsw/req=$(echo "($C1-$C0)/$N" | bc -l | xargs printf %.3f)"
kill $PID; wait $PID 2>/dev/null
rm -rf $DATA $DATA.srv $DATA.wrk
