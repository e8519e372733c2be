#!/bin/bash
# fl.sh TREE NAME: one run of the forced bad path (diag2.py) beside two nice-5 burners
P=""; for k in 1 2; do nice -n 5 python -c "while True: pass" & P="$P $!"; done; sleep 1
SCRIPT=diag2.py ./run1b.sh $1 $2; kill $P; wait $P 2>/dev/null
