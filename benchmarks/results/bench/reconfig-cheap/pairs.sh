#!/bin/bash
# old (main 2c89a80, /work/wt/reconfig-cheap-old) and new (this branch) alternating, one
# process at a time, nice 5: PAIRS busy pairs beside ONE burner, then QUIET quiet pairs.
# bash pairs.sh PAIRS QUIET RUN; rows and loads in RUN/ here (busy-<tree>-<i>, quiet-<tree>-<i>).
D=$(cd "$(dirname "$0")" && pwd)/$3
mkdir -p "$D"
run() {  # tree name
  local tree=$1 name=$2
  cd /work/wt/$tree || exit 1
  echo "$name $(uptime)" >> "$D/load.txt"
  PYTHONPATH=$PWD nice -n 5 /usr/bin/time -f "$name %U user %S sys %e wall" \
    schedopt bench reconfig-paper --methods auto --time-limits 10 --no-report \
    --out "$D/$name.jsonl" 2>> "$D/time.txt" > /dev/null
  echo "$name after $(uptime)" >> "$D/load.txt"
}
for i in $(seq 1 "$1"); do
  python -c "while True: pass" & B=$!
  sleep 1
  if [ $((i % 2)) -eq 1 ]; then run reconfig-cheap-old busy-old-$i; run reconfig-cheap busy-new-$i
  else run reconfig-cheap busy-new-$i; run reconfig-cheap-old busy-old-$i; fi
  kill $B
done
for i in $(seq 1 "$2"); do
  if [ $((i % 2)) -eq 1 ]; then run reconfig-cheap-old quiet-old-$i; run reconfig-cheap quiet-new-$i
  else run reconfig-cheap quiet-new-$i; run reconfig-cheap-old quiet-old-$i; fi
done
