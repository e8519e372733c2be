#!/bin/bash
A=/tmp/rc-w7/newA; C=/tmp/rc-w7/newC
for i in 1 2 3; do
  if [ $((i % 2)) = 1 ]; then ./fl.sh $A G-A-$i; ./fl.sh $C G-C-$i
  else ./fl.sh $C G-C-$i; ./fl.sh $A G-A-$i; fi
done
touch out/done3
