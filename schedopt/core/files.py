"""Reading input files with a cap on the bytes actually read.

Every loader reads through here: the size the file system reports is checked first, and the
cap is enforced on the bytes read, since devices, pipes and /proc files report 0
(``/dev/zero`` or a FIFO that never ends would otherwise be read forever). Errors are
:class:`InvalidInstanceError` naming the file, never ``OSError`` or ``UnicodeDecodeError``.
"""

from __future__ import annotations

from pathlib import Path

from .errors import InvalidInstanceError


def read_capped(p: Path, cap: int) -> bytes:
    """The file's bytes, refusing more than ``cap``."""
    try:
        size = p.stat().st_size
        if size > cap:
            raise InvalidInstanceError("", f"{p} is {size:,} bytes; the limit is {cap:,}")
        with p.open("rb") as f:
            data = f.read(cap + 1)
    except OSError as err:
        raise InvalidInstanceError("", f"cannot read {p}: {err.strerror or err}") from None
    if len(data) > cap:
        raise InvalidInstanceError("", f"{p} holds more than {cap:,} bytes (the limit)")
    return data


def read_text(p: Path, cap: int, where: str) -> str:
    """The file as UTF-8 text (a byte-order mark dropped), refusing more than ``cap`` bytes;
    errors name ``where``."""
    try:
        return read_capped(p, cap).decode("utf-8-sig")
    except InvalidInstanceError as err:
        raise InvalidInstanceError(where, err.reason) from None
    except UnicodeDecodeError as err:
        raise InvalidInstanceError(where, f"not UTF-8 text (byte {err.start:,})") from None
