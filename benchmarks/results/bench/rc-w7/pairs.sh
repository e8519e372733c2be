#!/bin/bash
# pairs.sh: old/new alternating (order flipped each pair)
OLD=/work/wt/rc-w7-old; NEW=/tmp/rc-w7/newA
pair() { # TAG i MODE REC
  local a=old b=new A=$OLD B=$NEW
  if [ $(($2 % 2)) = 0 ]; then a=new; b=old; A=$NEW; B=$OLD; fi
  for x in "$a $A" "$b $B"; do set -- $x "${@}"; done
}
run() { # TREE NAME MODE REC
  case $3 in
    quiet) ./run1.sh $1 $2 "" $4;;
    busy) ./run1.sh $1 $2 busy $4;;
    load) ./loaded.sh $1 $2 2;;
  esac
}
go() { # TAG N MODE REC
  for i in $(seq 1 $2); do
    if [ $((i % 2)) = 1 ]; then run $OLD $1-old-$i $3 $4; run $NEW $1-new-$i $3 $4
    else run $NEW $1-new-$i $3 $4; run $OLD $1-old-$i $3 $4; fi
  done
}
go Q 5 quiet 1024gpu-16+16-s0
go L 4 load
go B 2 busy 1024gpu-16+16-s0
go S 2 quiet 256gpu-16+16-s0
touch out/done
