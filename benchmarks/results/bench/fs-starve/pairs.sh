#!/bin/bash
# pairs.sh TAG NPAIRS BURNERS [RECIPE]: old/new alternating (order flipped each pair), nice 5;
# RECIPE of fairshare-paper, 16384gpu-200t-20000j-s0 unless given (4096gpu-100t-5000j-s0)
TAG=$1; N=$2; B=$3; RECIPE=${4:-16384gpu-200t-20000j-s0}
run() {  # tree name
  local pids=()
  local k; for k in $(seq 1 $B); do python -c "while True: pass" & pids+=($!); done
  sleep 0.5
  local l0=$(cut -d' ' -f1-3 /proc/loadavg)
  local s=$(date -u +%H:%M:%S)
  (cd /work/wt/$1 && PYTHONPATH=/work/wt/$1 nice -n 5 python -m schedopt bench fairshare-paper --recipes $RECIPE --methods auto --time-limits 10 --no-report --out /tmp/fss/rows/$2.jsonl > /tmp/fss/rows/$2.out 2>&1)
  for p in "${pids[@]}"; do kill $p; done
  wait "${pids[@]}" 2>/dev/null
  echo "$2 $s load $l0 -> $(cut -d' ' -f1-3 /proc/loadavg)" >> /tmp/fss/rows/log.txt
}
for i in $(seq 1 $N); do
  if [ $((i % 2)) = 1 ]; then run fs-starve-old $TAG-old-$i; run fs-starve $TAG-new-$i
  else run fs-starve $TAG-new-$i; run fs-starve-old $TAG-old-$i; fi
done
