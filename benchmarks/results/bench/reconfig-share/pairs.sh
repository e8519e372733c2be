#!/bin/bash
# pairs.sh TAG NBUSY NQUIET [NBURNERS=2]: old/new alternating (order flipped each pair); busy pairs beside NBURNERS burners
[ "$1" = --help ] && { sed -n 2p "$0"; exit 0; }
TAG=$1; NBR=${4:-2}
for i in $(seq 1 $2); do
  if [ $((i % 2)) = 1 ]; then A=old; B=new; else A=new; B=old; fi
  for s in $A $B; do
    T=/work/wt/rc-share; [ $s = old ] && T=/work/wt/rc-share-old
    /tmp/rcs/run1.sh $T $TAG-busy-$s-$i $NBR
  done
done
for i in $(seq 1 $3); do
  if [ $((i % 2)) = 1 ]; then A=new; B=old; else A=old; B=new; fi
  for s in $A $B; do
    T=/work/wt/rc-share; [ $s = old ] && T=/work/wt/rc-share-old
    /tmp/rcs/run1.sh $T $TAG-quiet-$s-$i
  done
done
