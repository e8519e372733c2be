#!/bin/sh
# decomp:physical deterministic at 10 s, 1,024 then 256 GPUs: quiet, then beside one CPU
# burner (python -c "while True: pass", killed right after), nice 5 (#17)
D=benchmarks/results/bench/rc-det
for size in "128 1024" "32 512"; do
  PYTHONPATH=$PWD nice -n 5 python $D/det_check.py $size 10 >> $D/det-quiet.jsonl
  python -c "while True: pass" & B=$!
  PYTHONPATH=$PWD nice -n 5 python $D/det_check.py $size 10 >> $D/det-burner.jsonl
  kill $B
done
