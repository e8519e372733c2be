#!/bin/bash
# pairs.sh TAG NBUSY NQUIET : old/new alternating (order flipped each pair); busy pairs beside one burner
TAG=$1
for i in $(seq 1 $2); do
  if [ $((i % 2)) = 1 ]; then A=old; B=new; else A=new; B=old; fi
  for s in $A $B; do
    T=/work/wt/rc-cpu; [ $s = old ] && T=/work/wt/rc-cpu-old
    /tmp/rcc/run1.sh $T $TAG-busy-$s-$i busy
  done
done
for i in $(seq 1 $3); do
  if [ $((i % 2)) = 1 ]; then A=new; B=old; else A=old; B=new; fi
  for s in $A $B; do
    T=/work/wt/rc-cpu; [ $s = old ] && T=/work/wt/rc-cpu-old
    /tmp/rcc/run1.sh $T $TAG-quiet-$s-$i
  done
done
