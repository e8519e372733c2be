#!/bin/bash
OLD=/work/wt/rc-w7-old; NEW=/tmp/rc-w7/newC
./run1.sh $OLD CSB-old-1 busy 256gpu-16+16-s0; ./run1.sh $NEW CSB-new-1 busy 256gpu-16+16-s0
./run1.sh $NEW CSB-new-2 busy 256gpu-16+16-s0; ./run1.sh $OLD CSB-old-2 busy 256gpu-16+16-s0
touch out/done5
