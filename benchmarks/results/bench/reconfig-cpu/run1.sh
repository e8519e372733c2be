#!/bin/bash
# run1.sh TREE NAME [busy]  -> one bench run, rows in /tmp/rcc/out/NAME.jsonl, phases NAME.events.jsonl
TREE=$1; NAME=$2; BUSY=$3
cd $TREE
BP=
if [ "$BUSY" = busy ]; then nice -n 0 python -c "while True: pass" & BP=$!; sleep 1; fi
echo "$(date +%T) $(uptime | sed 's/.*load average: //')" > /tmp/rcc/out/$NAME.load
RC_LOG=/tmp/rcc/out/$NAME.events.jsonl PYTHONPATH=$TREE /usr/bin/time -f "%U %S %e" -o /tmp/rcc/out/$NAME.time nice -n 5 python /tmp/rcc/phases.py bench reconfig-paper --methods auto --time-limits 10 --no-report --out /tmp/rcc/out/$NAME.jsonl > /tmp/rcc/out/$NAME.stdout 2>&1
echo "$(date +%T) $(uptime | sed 's/.*load average: //')" >> /tmp/rcc/out/$NAME.load
if [ -n "$BP" ]; then kill $BP; wait $BP 2>/dev/null; fi
