"""Drop one constraint block from one emitter and run the model-equivalence test on it.

    python tests/model/sabotage.py C6                        # HiGHS loses admission's C6
    python tests/model/sabotage.py C6 emit_cpsat:CpsatSession
    python tests/model/sabotage.py C8 emit_pulp:PulpSession moe_placement

The test must fail, naming the block (issue 8: "show it once").
"""

import importlib
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

cid = sys.argv[1]
where = sys.argv[2] if len(sys.argv) > 2 else "emit_highs:HighsSession"
problem = sys.argv[3] if len(sys.argv) > 3 else ""
module, name = where.split(":")
session = getattr(importlib.import_module(f"schedopt.model.{module}"), name)
real = session.add_block
session.add_block = lambda self, block: None if block.cid == cid else real(self, block)
test = str(ROOT / "tests/conformance/test_model_equivalence.py")
sys.exit(pytest.main(["-q", "-p", "no:cacheprovider", test, "-x", "-k", problem]))
