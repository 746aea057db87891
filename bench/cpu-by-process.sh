#!/bin/bash
# CPU per request of the primary and of the workers of `serve --workers N`, separately, from
# /proc/<pid>/stat (docs/scaling.md "The request log line of a forwarded request"): one server of
# <checkout> (its dist/ built), wrk -t1 -c50 for <seconds> after 2 s of warm-up, creates or gets
# by id. <sink>: the server's stdout into /dev/null, or into a pipe read by `cat` (a log collector).
# Run it under the bench lock: flock /tmp/bench.lock bench/cpu-by-process.sh /work/wt/x 2 info pipe 5
# usage: cpu-by-process.sh <checkout> <workers> <log level> <null|pipe> [seconds] [create|get]
CO=$1; W=$2; LL=$3; SINK=$4; SECS=${5:-5}; SC=${6:-create}
PORT=$((20000 + RANDOM % 20000))
DATA=$(mktemp -d /tmp/tb-cpu-XXXX)
LUA=$DATA.lua
cd $CO
export JWT_SECRET=$(head -c32 /dev/urandom | xxd -p -c64) PASSWORD_SECRET=$(head -c32 /dev/urandom | xxd -p -c64) LOG_LEVEL=$LL TABLEBASE_RUN=dist
if [ "$SINK" = null ]; then
  node bin/tablebase.mjs serve --project examples/bench --data $DATA --host 127.0.0.1 --port $PORT --workers $W >/dev/null 2>&1 &
  PID=$!
else
  mkfifo $DATA.fifo; cat $DATA.fifo > /dev/null & CATP_PID=$!
  node bin/tablebase.mjs serve --project examples/bench --data $DATA --host 127.0.0.1 --port $PORT --workers $W > $DATA.fifo 2>&1 &
  PID=$!
fi
for i in $(seq 100); do curl -sf http://127.0.0.1:$PORT/health >/dev/null && break; sleep 0.2; done
sleep 0.5
cpu() { awk '{print $14+$15}' /proc/$1/stat; }
kids() { ps -o pid= --ppid $PID | tr -d ' '; }
if [ "$SC" = create ]; then
  printf 'wrk.method="POST"\nwrk.body=[[{"table":"items","object":{"title":"bench","n":1}}]]\nwrk.headers["Content-Type"]="application/json"\n' > $LUA
  URL=http://127.0.0.1:$PORT/db; S="-s $LUA"
else
  ID=$(curl -s -XPOST -H 'content-type: application/json' -d '{"table":"items","object":{"title":"x","n":1}}' http://127.0.0.1:$PORT/db | sed 's/.*"id":"\([^"]*\)".*/\1/')
  URL="http://127.0.0.1:$PORT/db?body=%7B%22table%22%3A%22items%22%2C%22where%22%3A%7B%22id%22%3A%7B%22eq%22%3A%22$ID%22%7D%7D%7D"; S=""
fi
wrk -t1 -c50 -d2s $S "$URL" >/dev/null   # warm-up
P0=$(cpu $PID); K0=0; for k in $(kids); do K0=$((K0 + $(cpu $k))); done
OUT=$(wrk -t1 -c50 -d${SECS}s $S "$URL")
P1=$(cpu $PID); K1=0; for k in $(kids); do K1=$((K1 + $(cpu $k))); done
N=$(echo "$OUT" | grep -oP '\d+(?= requests in)')
RPS=$(echo "$OUT" | grep -oP 'Requests/sec:\s+\K[\d.]+')
TCK=$(getconf CLK_TCK)
echo "$(basename $CO) w=$W log=$LL sink=$SINK $SC: rps=$RPS n=$N primary_us=$(echo "($P1-$P0)*1000000/$TCK/$N" | bc -l | xargs printf %.1f) workers_us=$(echo "($K1-$K0)*1000000/$TCK/$N" | bc -l | xargs printf %.1f)"
kill $PID; wait $PID 2>/dev/null
[ "$SINK" = pipe ] && kill $CATP_PID 2>/dev/null
rm -rf $DATA $DATA.fifo $LUA
