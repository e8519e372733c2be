#!/bin/bash
# run1.sh TREE NAME [busy] [RECIPES]
TREE=$1; NAME=$2; BUSY=$3; REC=${4:-1024gpu-16+16-s0}
O=/tmp/rc-w7/out
cd $TREE
if [ "$BUSY" = busy ]; then python -c "while True: pass" & BP=$!; sleep 1; fi
echo "$(date +%T) $(cat /proc/loadavg)" > $O/$NAME.load
RC_LOG=$O/$NAME.events.jsonl PYTHONPATH=$TREE /usr/bin/time -f "%U %S %e" -o $O/$NAME.time nice -n 5 python /tmp/rc-w7/trace.py bench reconfig-paper --methods auto --time-limits 10 --recipes $REC --no-report --out $O/$NAME.jsonl > $O/$NAME.stdout 2>&1
echo "$(date +%T) $(cat /proc/loadavg)" >> $O/$NAME.load
if [ -n "$BP" ]; then kill $BP; wait $BP 2>/dev/null; fi
