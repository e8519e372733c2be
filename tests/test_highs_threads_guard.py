"""HiGHS fixes its thread pool at a process's first run; a later run in the same process that
asks for another size fails (found with fair share's and cosched's LPs, #16). Nothing in the
package may set HiGHS's ``threads`` option, so that one solve cannot break the next."""

import re
from pathlib import Path

import schedopt

_SETS_THREADS = re.compile(r"""(setOptionValue|passOption)\(\s*["']threads["']""")


def test_no_module_sets_highs_threads() -> None:
    root = Path(schedopt.__file__).parent
    offenders = [
        f"{path.relative_to(root)}:{n}"
        for path in sorted(root.rglob("*.py"))
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if _SETS_THREADS.search(line)
    ]
    assert not offenders, f"HiGHS's threads option is set at {offenders}"


def test_the_guard_sees_a_setting() -> None:
    assert _SETS_THREADS.search('h.setOptionValue("threads", 2)')
    assert _SETS_THREADS.search("h.setOptionValue( 'threads', 1)")
    assert not _SETS_THREADS.search('h.setOptionValue("time_limit", 1.0)')
