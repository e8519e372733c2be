#!/bin/bash
# pairs.sh BURNERS PAIRS PREFIX OUT [RECIPES...]: old (main, /work/wt/adm-starve-old) and new
# (this tree) alternating (old first in odd pairs, new first in even ones), one row at a time,
# each beside BURNERS nice-0 burners in a session of their own (row.sh), killed after each row.
D=$(dirname $0); nb=$1; n=$2; pre=$3; out=$4; shift 4
for ((i=1;i<=n;i++)); do
  for r in "$@"; do
    if ((i % 2)); then order="old new"; else order="new old"; fi
    for side in $order; do
      tree=/work/wt/adm-starve; [ $side = old ] && tree=/work/wt/adm-starve-old
      SETSID=setsid $D/row.sh $tree $pre-$side-$i $r $nb $out
    done
  done
done
