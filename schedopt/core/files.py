"""Reading input files with a cap on the bytes actually read.

Every loader reads through here. Only regular files are read: a FIFO that nobody writes to
blocked ``open()`` forever, one with a writer streaming junk was read up to the cap, and a
device such as ``/dev/zero`` never ends (#16); each is refused, naming the file, before a byte
is read. The file is stat'ed before it is opened (a FIFO is never opened blocking) and opened
with ``O_NONBLOCK``, then checked again on the open descriptor (a file swapped in between).
The size the file system reports is checked first and the cap is enforced on the bytes read
(``/proc`` files report 0). Errors are :class:`InvalidInstanceError` naming the file, never
``OSError`` or ``UnicodeDecodeError``.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from .errors import InvalidInstanceError

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)

#: Open without blocking (a FIFO without a writer) and without leaking into child processes.
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)


def _check_regular(p: Path, st: os.stat_result, cap: int) -> None:
    if not stat.S_ISREG(st.st_mode):
        kind = next((name for test, name in _KINDS if test(st.st_mode)), "not a regular file")
        raise InvalidInstanceError("", f"{p} is {kind}; only regular files are read")
    if st.st_size > cap:
        raise InvalidInstanceError("", f"{p} is {st.st_size:,} bytes; the limit is {cap:,}")


def read_capped(p: Path, cap: int) -> bytes:
    """The regular file's bytes, refusing more than ``cap``."""
    try:
        _check_regular(p, os.stat(p), cap)
        fd = os.open(p, _OPEN_FLAGS)
        with os.fdopen(fd, "rb") as f:
            _check_regular(p, os.fstat(fd), cap)
            os.set_blocking(fd, True)
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
