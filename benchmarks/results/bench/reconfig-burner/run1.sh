#!/bin/bash
# run1.sh TREE NAME [busy]  -> one bench run, rows in /tmp/rcb/out/NAME.jsonl, log NAME.events.jsonl
TREE=$1; NAME=$2; BUSY=$3
mkdir -p /tmp/rcb/out
cd $TREE
if [ "$BUSY" = busy ]; then python -c "while True: pass" & BP=$!; sleep 1; fi
echo "$(date +%T) $(uptime | sed 's/.*load average: //')" > /tmp/rcb/out/$NAME.load
RC_LOG=/tmp/rcb/out/$NAME.events.jsonl PYTHONPATH=$TREE /usr/bin/time -f "%U %S %e" -o /tmp/rcb/out/$NAME.time nice -n 5 python /tmp/rcb/phases.py bench reconfig-paper --methods auto --time-limits 10 --no-report --out /tmp/rcb/out/$NAME.jsonl > /tmp/rcb/out/$NAME.stdout 2>&1
echo "$(date +%T) $(uptime | sed 's/.*load average: //')" >> /tmp/rcb/out/$NAME.load
if [ -n "$BP" ]; then kill $BP; wait $BP 2>/dev/null; fi
