#!/bin/bash
# loaded.sh TREE NAME K: one run beside K burners at nice 5 (emulating the others' load)
P=""
for k in $(seq 1 $3); do nice -n 5 python -c "while True: pass" & P="$P $!"; done
sleep 1
./run1.sh $1 $2
kill $P; wait $P 2>/dev/null
