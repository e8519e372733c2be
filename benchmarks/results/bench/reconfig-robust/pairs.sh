#!/bin/bash
# old = git worktree of main (/tmp/rr-old), new = this branch; alternating, one process at a time
# NEW: the new checkout (this branch by default); TL: the time limit (10 by default); TAG: a suffix for the side names (files, load.txt)
OUT=$(cd "$(dirname "$0")" && pwd)
for run in "$@"; do
  for side in old new; do
    dir=/tmp/rr-old; [ $side = new ] && dir=${NEW:-/work/wt/reconfig-robust}
    echo "$side$TAG ${TL:-10}s $run start $(date +%T) $(uptime | sed 's/.*load average: //')" >> "$OUT/load.txt"
    (cd $dir && PYTHONPATH=$PWD nice -n 5 schedopt bench reconfig-paper --methods auto \
        --time-limits ${TL:-10} --no-report --out "$OUT/$side${TAG}-${TL:-10}-$run.jsonl" > /dev/null 2>&1)
    echo "$side$TAG ${TL:-10}s $run end   $(date +%T) $(uptime | sed 's/.*load average: //')" >> "$OUT/load.txt"
  done
done
