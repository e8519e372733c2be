#!/bin/bash
OLD=/work/wt/rc-w7-old; NEW=/tmp/rc-w7/newA
for i in 1 2 3; do
  if [ $((i % 2)) = 1 ]; then ./run1.sh $OLD Q2-old-$i; ./run1.sh $NEW Q2-new-$i
  else ./run1.sh $NEW Q2-new-$i; ./run1.sh $OLD Q2-old-$i; fi
done
fl() { P=""; for k in 1 2; do nice -n 5 python -c "while True: pass" & P="$P $!"; done; sleep 1; SCRIPT=diag2.py ./run1b.sh $1 $2; kill $P; wait $P 2>/dev/null; }
for i in 1 2 3; do
  if [ $((i % 2)) = 1 ]; then fl $OLD F-old-$i; fl $NEW F-new-$i
  else fl $NEW F-new-$i; fl $OLD F-old-$i; fi
done
touch out/done2
