"""A HiGHS instance that writes nothing to stdout (the CLI's ``--json`` output must parse).

HiGHS prints its banner from C on the first ``Highs()`` of a process, whichever thread makes
it; every ``Highs`` schedopt creates comes from :func:`quiet_highs`, which makes that first one
with fd 1 muted, once, under a lock (two threads starting at once would otherwise race past
the mute: the second one's instance could be the process's first).
"""

from __future__ import annotations

import os
import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import highspy

_BANNER_LOCK = threading.Lock()
_BANNER_SHOWN = False


def swallow_highs_banner() -> None:
    """Create the process's first ``Highs()`` with fd 1 muted, so its banner goes nowhere."""
    global _BANNER_SHOWN
    if _BANNER_SHOWN:
        return
    with _BANNER_LOCK:
        if _BANNER_SHOWN:
            return
        import highspy  # imported when first used (start-up imports no solver)

        try:
            saved = os.dup(1)
        except OSError:
            _BANNER_SHOWN = True
            return
        try:
            with open(os.devnull, "w") as devnull:
                os.dup2(devnull.fileno(), 1)
                highspy.Highs()
        finally:
            os.dup2(saved, 1)
            os.close(saved)
            _BANNER_SHOWN = True


def quiet_highs(verbose: bool = False) -> highspy.Highs:
    """A new ``highspy.Highs`` with its log off (on with ``verbose``) and no banner on stdout."""
    import highspy

    swallow_highs_banner()
    h = highspy.Highs()
    h.setOptionValue("output_flag", bool(verbose))
    return h
