#!/bin/bash
# diag.sh TREE RECIPE BURNERS [FACTOR]: diag.py under nice -n 5 beside BURNERS nice-0 burners
# in a session of their own (setsid), killed right after.
pids=()
for ((i=0;i<$3;i++)); do setsid python -c "while True: pass" & pids+=($!); done
[ "$3" -gt 0 ] && sleep 1
nice -n 5 python $(dirname $0)/${SCRIPT:-diag.py} $1 $2 ${4:-1}
for p in "${pids[@]}"; do kill $p; done; wait 2>/dev/null
