# Sourced by get-syscalls.sh and get-cpu-split.sh (docs/scaling.md "What a get costs the kernel"):
# starts the server of kind $KIND — the raw node:http server of bench/raw-server.ts, one process
# (w1) or --workers 2 (w2) of this checkout (dist/ built) — on a free-ish port with one row, warms
# it under wrk, and sets PID, URL, DATA and SRV/PIDS (the processes that serve HTTP: the server
# itself, or the workers of w2). The server and its data are removed when the script exits.
CO=$(cd "$(dirname "$0")/.." && pwd)
PORT=$((20000 + RANDOM % 20000))
DATA=$(mktemp -d /tmp/tb-sys-XXXX)
trap 'kill $PID 2>/dev/null; wait $PID 2>/dev/null; rm -rf $DATA $DATA.srv $DATA.wrk' EXIT
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
if [ $KIND = w2 ]; then SRV=$(ps -o pid= --ppid $PID | tr -d ' ' | tr '\n' ' '); else SRV=$PID; fi
PIDS=$(echo $SRV | tr ' ' ',')
