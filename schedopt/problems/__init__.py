"""One sub-package per decision problem; importing this registers them all.

Problem packages never import one another.
"""

from . import admission, fairshare, moe_placement

__all__ = ["admission", "fairshare", "moe_placement"]
