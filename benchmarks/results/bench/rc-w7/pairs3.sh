#!/bin/bash
A=/tmp/rc-w7/newA; C=/tmp/rc-w7/newC
fl() { P=""; for k in 1 2; do nice -n 5 python -c "while True: pass" & P="$P $!"; done; sleep 1; SCRIPT=diag2.py ./run1b.sh $1 $2; kill $P; wait $P 2>/dev/null; }
for i in 1 2 3; do
  if [ $((i % 2)) = 1 ]; then fl $A G-A-$i; fl $C G-C-$i
  else fl $C G-C-$i; fl $A G-A-$i; fi
done
touch out/done3
