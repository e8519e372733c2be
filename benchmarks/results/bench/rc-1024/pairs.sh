#!/bin/bash
# pairs.sh TAG NBUSY NQUIET: old/new alternating (order flipped each pair), both recipes
OLD=/work/wt/rc-1024-old; NEW=/tmp/rc1024/newG
R=256gpu-16+16-s0,1024gpu-16+16-s0
TAG=$1
for i in $(seq 1 $2); do
  if [ $((i % 2)) = 1 ]; then ./run1.sh $OLD $TAG-busy-old-$i busy $R; ./run1.sh $NEW $TAG-busy-new-$i busy $R
  else ./run1.sh $NEW $TAG-busy-new-$i busy $R; ./run1.sh $OLD $TAG-busy-old-$i busy $R; fi
done
for i in $(seq 1 $3); do
  if [ $((i % 2)) = 1 ]; then ./run1.sh $OLD $TAG-quiet-old-$i "" $R; ./run1.sh $NEW $TAG-quiet-new-$i "" $R
  else ./run1.sh $NEW $TAG-quiet-new-$i "" $R; ./run1.sh $OLD $TAG-quiet-old-$i "" $R; fi
done
touch out/$TAG.done
