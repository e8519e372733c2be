#!/bin/bash
# row.sh TREE TAG RECIPE BURNERS OUT : one admission-paper row of `auto` at 10 s in TREE,
# under nice -n 5, beside BURNERS nice-0 CPU burners started here and killed right after.
tree=$1; tag=$2; recipe=$3; nb=$4; out=$5
pids=()
for ((i=0;i<nb;i++)); do ${SETSID:-} python -c "while True: pass" & pids+=($!); done
[ "$nb" -gt 0 ] && sleep 1
l0=$(cut -d' ' -f1 /proc/loadavg)
(cd $tree && PYTHONPATH=$tree nice -n 5 python -m schedopt bench admission-paper --recipes $recipe \
   --methods auto --time-limits 10 --no-report --out /tmp/adm-starve-row.jsonl >/dev/null 2>&1)
l1=$(cut -d' ' -f1 /proc/loadavg)
for p in "${pids[@]}"; do kill $p; done
wait 2>/dev/null
python - "$tag" "$l0" "$l1" "$out" <<'PY'
import json, sys
tag, l0, l1, out = sys.argv[1:]
r = json.loads(open("/tmp/adm-starve-row.jsonl").read().splitlines()[-1])
r["tag"] = tag; r["load"] = f"{l0} -> {l1}"
open(out, "a").write(json.dumps(r) + "\n")
st = r.get("stats", {})
print(tag, r.get("recipe"), r.get("objective"), r.get("best_bound"), r.get("gap"), "wall", r.get("wall_s"), "cpu", r.get("cpu_s"), r["load"],
      {k: st.get(k) for k in ("bound","guide_s","b1l","start_s","bound_s","start_value","repair_steps","repair_gain","join_s")})
PY
rm -f /tmp/adm-starve-row.jsonl
