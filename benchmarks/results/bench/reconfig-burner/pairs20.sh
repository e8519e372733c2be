#!/bin/bash
# pairs20.sh TAG N LIMIT : old/new alternating beside one burner at --time-limits LIMIT (a stand-in for a row's CPU at a lower load)
TAG=$1; LIM=$3
for i in $(seq 1 $2); do
  if [ $((i % 2)) = 1 ]; then A=old; B=new; else A=new; B=old; fi
  for s in $A $B; do
    T=/work/wt/rc-busy; [ $s = old ] && T=/work/wt/rc-busy-old
    NAME=$TAG-busy-$s-$i
    cd $T
    python -c "while True: pass" & BP=$!; sleep 1
    echo "$(date +%T) $(uptime | sed 's/.*load average: //')" > /tmp/rcb/out/$NAME.load
    RC_LOG=/tmp/rcb/out/$NAME.events.jsonl PYTHONPATH=$T /usr/bin/time -f "%U %S %e" -o /tmp/rcb/out/$NAME.time nice -n 5 python /tmp/rcb/phases.py bench reconfig-paper --methods auto --time-limits $LIM --no-report --out /tmp/rcb/out/$NAME.jsonl > /tmp/rcb/out/$NAME.stdout 2>&1
    echo "$(date +%T) $(uptime | sed 's/.*load average: //')" >> /tmp/rcb/out/$NAME.load
    kill $BP; wait $BP 2>/dev/null
  done
done
