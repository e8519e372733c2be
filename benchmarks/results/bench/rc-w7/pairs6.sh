#!/bin/bash
OLD=/work/wt/rc-w7-old; NEW=/tmp/rc-w7/newC
for i in 4 5 6; do
  if [ $((i % 2)) = 1 ]; then ./run1.sh $OLD CQ-old-$((i+2)); ./run1.sh $NEW CQ-new-$((i+2)); ./fl.sh $OLD CF-old-$i; ./fl.sh $NEW CF-new-$i
  else ./run1.sh $NEW CQ-new-$((i+2)); ./run1.sh $OLD CQ-old-$((i+2)); ./fl.sh $NEW CF-new-$i; ./fl.sh $OLD CF-old-$i; fi
done
touch out/done6
