#!/bin/sh
# reconfig paper rows, main (old) against rc-det (new), alternating, 2 pairs, nice 5 (#17)
OUT=benchmarks/results/bench/rc-det
for i in 1 2; do
  for side in old new; do
    if [ $side = old ]; then TREE=/work/wt/rc-det-old; else TREE=/work/wt/rc-det; fi
    echo "$side $i load $(cat /proc/loadavg)"
    (cd $TREE && PYTHONPATH=$TREE nice -n 5 python -m schedopt bench reconfig-paper --methods auto \
      --time-limits 10 --no-report --out /work/wt/rc-det/$OUT/paper-$side-$i.jsonl) > /dev/null 2>&1
  done
done
