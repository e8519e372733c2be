set -u
W=/work/wt/reconfig-target
for i in 1 2 3; do
  for v in old q8 grid ad; do
    out=/tmp/rtb/p$i-$v.json
    if [ $v = old ]; then
      (cd /tmp/rt-old && echo "$v $i start $(uptime)" >> /tmp/rtb/pairs.load && PYTHONPATH=/tmp/rt-old nice -n 5 schedopt bench reconfig-paper --methods auto --time-limits 10 --no-report --out $out > /dev/null 2>&1)
    else
      (cd $W && echo "$v $i start $(uptime)" >> /tmp/rtb/pairs.load && RT_MODE=$v PYTHONPATH=$W nice -n 5 schedopt bench reconfig-paper --methods auto --time-limits 10 --no-report --out $out > /dev/null 2>&1)
    fi
    echo "$v $i end $(uptime)" >> /tmp/rtb/pairs.load
  done
done
