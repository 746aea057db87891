#!/bin/bash
# What a get by id costs the kernel (docs/scaling.md "What a get costs the kernel"): the raw
# node:http server of bench/raw-server.ts, one process (w1) or the workers of --workers 2 (w2) of
# this checkout (dist/ built), under wrk -t1 -c50: system calls per request by kind and context
# switches (perf stat on the serving processes, and on wrk), TCP segments per request (nstat,
# machine-wide: run nothing else). Under the bench lock: flock /tmp/bench.lock bench/get-syscalls.sh w1 4
# usage: get-syscalls.sh <raw|w1|w2> [seconds]
KIND=$1; SECS=${2:-5}
source "$(dirname "$0")/get-server.sh"
nstat -n
perf stat -x, -e raw_syscalls:sys_enter,context-switches,syscalls:sys_enter_read,syscalls:sys_enter_write,syscalls:sys_enter_writev,syscalls:sys_enter_epoll_wait,syscalls:sys_enter_epoll_pwait,syscalls:sys_enter_epoll_ctl,syscalls:sys_enter_futex,syscalls:sys_enter_getrusage,syscalls:sys_enter_clock_gettime,syscalls:sys_enter_pread64,syscalls:sys_enter_fcntl,syscalls:sys_enter_recvfrom,syscalls:sys_enter_sendto,syscalls:sys_enter_newfstat,syscalls:sys_enter_newfstatat,syscalls:sys_enter_statx,syscalls:sys_enter_pwrite64,syscalls:sys_enter_ioctl,syscalls:sys_enter_mmap,syscalls:sys_enter_munmap,syscalls:sys_enter_madvise,syscalls:sys_enter_mprotect -p $PIDS -o $DATA.srv -- sleep $SECS &
PERF=$!
OUT=$(perf stat -x, -e raw_syscalls:sys_enter,context-switches -o $DATA.wrk -- wrk -t1 -c50 -d${SECS}s "$URL")
wait $PERF
NS=$(nstat)
N=$(echo "$OUT" | grep -oP '\d+(?= requests in)')
RPS=$(echo "$OUT" | grep -oP 'Requests/sec:\s+\K[\d.]+')
per() { awk -F, -v n=$N -v e=$1 '$3==e {printf "%.2f", $1/n}' $2; }
seg() { echo "$NS" | awk -v n=$N -v k=$1 '$1==k {printf "%.2f", $2/n}'; }
awk -F, -v n=$N '$1+0>0 {printf "  srv %s %.3f/req\n", $3, $1/n}' $DATA.srv
echo "$KIND get: rps=$RPS n=$N | server syscalls/req=$(per raw_syscalls:sys_enter $DATA.srv) cs/req=$(per context-switches $DATA.srv) | wrk syscalls/req=$(per raw_syscalls:sys_enter $DATA.wrk) cs/req=$(per context-switches $DATA.wrk) | TcpOutSegs/req=$(seg TcpOutSegs) TcpInSegs/req=$(seg TcpInSegs)"
