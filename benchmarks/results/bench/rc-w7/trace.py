"""rc-1024's phase logger (``../rc-1024/trace.py``: CPU and wall of each phase, every W7
target) with every HiGHS run's model status, time limit, wall, objective and dual bound logged
too (``highs`` events: a time limit or a proof). RC_LOG=F python trace.py bench ...
(The rows here ran from a flat copy of both in one file; the same wrappers.)"""

import json
import os
import runpy
import time
from pathlib import Path

import schedopt.problems.reconfig.master as ma

LOG = os.environ["RC_LOG"]
T0 = time.perf_counter()
_qh = ma.quiet_highs


class _Logged:
    """HiGHS with each run's model status logged (time limit or a proof)."""

    def __init__(self, h):
        object.__setattr__(self, "_h", h)
        object.__setattr__(self, "_lim", None)

    def __getattr__(self, k):
        return getattr(self._h, k)

    def setOptionValue(self, k, v):
        if k == "time_limit":
            object.__setattr__(self, "_lim", v)
        return self._h.setOptionValue(k, v)

    def run(self):
        t = time.perf_counter()
        r = self._h.run()
        h = self._h
        mip = h.getNumCol() and any(h.getLp().integrality_)
        info = h.getInfo()
        with open(LOG, "a") as f:
            rec = {
                "ev": "highs",
                "t": round(t - T0, 3),
                "mip": bool(mip),
                "status": h.modelStatusToString(h.getModelStatus()),
                "limit": None if self._lim is None else round(self._lim, 3),
                "wall": round(time.perf_counter() - t, 3),
                "obj": info.objective_function_value,
                "dual": getattr(info, "mip_dual_bound", None),
                "nodes": getattr(info, "mip_node_count", None),
            }
            f.write(json.dumps(rec) + "\n")
        return r


ma.quiet_highs = lambda: _Logged(_qh())

if __name__ == "__main__":
    runpy.run_path(str(Path(__file__).parent.parent / "rc-1024" / "trace.py"), run_name="__main__")
