#!/bin/bash
# w7pairs.sh N LIMIT: decomp:physical at 16 GPUs (generate_custom(4, 4, 'llama2-7b', 32, 1, 2)), old/new alternating, W7's CPU and wall
[ "$1" = --help ] && { sed -n 2p "$0"; exit 0; }
for i in $(seq 1 $1); do
  if [ $((i % 2)) = 1 ]; then A=old; B=new; else A=new; B=old; fi
  for s in $A $B; do
    T=/work/wt/rc-share; [ $s = old ] && T=/work/wt/rc-share-old
    echo "== $s-$i $(date +%T) $(uptime | sed 's/.*load average: //')"
    PYTHONPATH=$T nice -n 5 python /tmp/rcs/small.py $2 2>&1 | tail -3
  done
done
