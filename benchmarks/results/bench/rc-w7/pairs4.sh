#!/bin/bash
OLD=/work/wt/rc-w7-old; NEW=/tmp/rc-w7/newC
go() { # TAG N MODE REC
  for i in $(seq 1 $2); do
    if [ $((i % 2)) = 1 ]; then $3 $OLD $1-old-$i; $3 $NEW $1-new-$i
    else $3 $NEW $1-new-$i; $3 $OLD $1-old-$i; fi
  done
}
quiet() { ./run1.sh $1 $2; }
busy() { ./run1.sh $1 $2 busy; }
small() { ./run1.sh $1 $2 "" 256gpu-16+16-s0; }
go CQ 5 quiet
go CB 2 busy
go CS 2 small
go CF 3 ./fl.sh
touch out/done4
