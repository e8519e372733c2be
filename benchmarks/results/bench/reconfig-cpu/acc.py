"""Accumulate CPU per function (no profiler): import acc; acc.install(); ...; acc.report()"""

import functools
import importlib
import time

TOT = {}


def install():
    targets = {
        "schedopt.problems.reconfig.pricing": [
            "_least_cost",
            "_caps",
            "unique_rows",
            "counted_out",
            "least_per_count",
            "cheapest_types",
            "supply_value",
        ],
        "schedopt.problems.reconfig.master": ["solve_master"],
        "schedopt.problems.reconfig.dw_prices": ["_credit"],
        "schedopt.problems.reconfig.stage_bound": ["build_stage_data"],
        "schedopt.problems.reconfig.branch": ["every_count", "integer_master"],
    }
    mods = [
        "schedopt.problems.reconfig.pricing",
        "schedopt.problems.reconfig.master",
        "schedopt.problems.reconfig.dw_prices",
        "schedopt.problems.reconfig.stage_bound",
        "schedopt.problems.reconfig.branch",
        "schedopt.problems.reconfig.price_bound",
        "schedopt.problems.reconfig.columns",
        "schedopt.problems.reconfig.targets",
    ]
    loaded = {m: importlib.import_module(m) for m in mods}
    for src, names in targets.items():
        for n in names:
            fn = getattr(loaded[src], n)

            @functools.wraps(fn)
            def w(*a, __fn=fn, __n=n, **k):
                c = time.process_time()
                try:
                    return __fn(*a, **k)
                finally:
                    d = time.process_time() - c
                    t = TOT.setdefault(__n, [0, 0.0])
                    t[0] += 1
                    t[1] += d

            for m in loaded.values():
                if getattr(m, n, None) is fn:
                    setattr(m, n, w)


def report():
    for n, (k, s) in sorted(TOT.items(), key=lambda x: -x[1][1]):
        print(f"  {n:18s} {k:5d} {s:.3f}")
    TOT.clear()
