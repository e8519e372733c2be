#!/bin/bash
# run1.sh TREE NAME [NBURNERS] -> one bench run (10 s, 256 and 1,024 GPUs), rows in /tmp/rcs/out/NAME.jsonl, phases NAME.events.jsonl
[ "$1" = --help ] && { sed -n 2p "$0"; exit 0; }
TREE=$1; NAME=$2; NB=${3:-0}
cd $TREE
BPS=
for i in $(seq 1 $NB); do nice -n 0 python -c "while True: pass" & BPS="$BPS $!"; done
[ -n "$BPS" ] && sleep 1
echo "$(date +%T) $(uptime | sed 's/.*load average: //')" > /tmp/rcs/out/$NAME.load
RC_LOG=/tmp/rcs/out/$NAME.events.jsonl PYTHONPATH=$TREE /usr/bin/time -f "%U %S %e" -o /tmp/rcs/out/$NAME.time nice -n 5 python /tmp/rcs/phases.py bench reconfig-paper --methods auto --time-limits 10 --no-report --out /tmp/rcs/out/$NAME.jsonl > /tmp/rcs/out/$NAME.stdout 2>&1
echo "$(date +%T) $(uptime | sed 's/.*load average: //')" >> /tmp/rcs/out/$NAME.load
for p in $BPS; do kill $p; wait $p 2>/dev/null; done
