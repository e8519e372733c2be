#!/bin/bash
OLD=/work/wt/rc-w7-old; NEW=/tmp/rc-w7/newA
for i in 1 2 3; do
  if [ $((i % 2)) = 1 ]; then ./run1.sh $OLD Q2-old-$i; ./run1.sh $NEW Q2-new-$i
  else ./run1.sh $NEW Q2-new-$i; ./run1.sh $OLD Q2-old-$i; fi
done
for i in 1 2 3; do
  if [ $((i % 2)) = 1 ]; then ./fl.sh $OLD F-old-$i; ./fl.sh $NEW F-new-$i
  else ./fl.sh $NEW F-new-$i; ./fl.sh $OLD F-old-$i; fi
done
touch out/done2
