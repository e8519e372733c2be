#!/bin/bash
OUT=/work/wt/reconfig-q10fast/benchmarks/results/bench/reconfig-q10fast
for pair in $(seq $1 $2); do
  for side in old new; do
    if [ $side = old ]; then D=/work/wt/q10fast-old; else D=/work/wt/q10fast-new; fi
    echo "$side-7 $pair start $(date +%T) $(uptime | sed 's/.*average: //')" >> $OUT/load.txt
    (cd $D && PYTHONPATH=$D nice -n 5 schedopt bench reconfig-paper --methods auto --time-limits 7 --no-report --out $OUT/$side-7-$pair.jsonl > /tmp/q10/$side-7-$pair.log 2>&1)
    echo "$side-7 $pair end $(date +%T) $(uptime | sed 's/.*average: //')" >> $OUT/load.txt
  done
done
