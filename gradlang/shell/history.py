"""The REPL's history file: where it lives, and memory instead when it cannot be used.

prompt_toolkit's FileHistory assumes a writable regular file. A directory,
/proc/version or /dev/full at that path made it print tracebacks or loop on a
write that never succeeds, so the file is tried first and a failure becomes
one note and an in-memory history. A symbolic link is refused the same way,
as `:export` refuses one: the history is never written through a link (it
could point at any file the user may write), and each line is appended with
O_NOFOLLOW, so a link put there later is refused too.
"""

from __future__ import annotations

import datetime
import errno
import os
import stat
import sys
from pathlib import Path


def history_path() -> Path:
    """GRADLANG_HISTORY, else gradlang/history in the user's data directory."""
    if os.environ.get("GRADLANG_HISTORY"):
        return Path(os.environ["GRADLANG_HISTORY"])
    if sys.platform == "win32":
        base = Path(os.environ.get("APPDATA", Path.home() / "AppData" / "Roaming"))
    elif sys.platform == "darwin":
        base = Path.home() / "Library" / "Application Support"
    else:
        base = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    return base / "gradlang" / "history"


def file_history():
    """History kept across sessions, and a note; in memory, with a note saying why, if the file is unusable.

    The file must be a regular file (or not exist yet) that can be read and
    appended to: a directory, /proc/version or /dev/full would otherwise make
    prompt_toolkit print tracebacks or loop on a write that never succeeds.
    """
    from prompt_toolkit.history import FileHistory, InMemoryHistory

    path = history_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | _APPENDING, 0o600)
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise OSError(0, "not a regular file")
            os.read(fd, 1)
        finally:
            os.close(fd)
    except OSError as error:
        return InMemoryHistory(), _history_note(path, _reason(error))

    class SafeFileHistory(FileHistory):
        """A write that fails later (a full disk) keeps the line in memory and says so once."""

        failed = False

        def store_string(self, string: str) -> None:
            if self.failed:
                return
            try:
                _append(path, string)
            except OSError as error:
                self.failed = True
                print(_history_note(path, _reason(error)), file=sys.stderr)

    return SafeFileHistory(str(path)), None


_APPENDING = os.O_APPEND | os.O_CREAT | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0)


def _append(path: Path, string: str) -> None:
    """One entry appended as FileHistory writes it (a comment line, then each line after a +), never via a link."""
    fd = os.open(path, os.O_WRONLY | _APPENDING, 0o600)
    with os.fdopen(fd, "ab") as handle:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(0, "not a regular file")
        lines = "".join(f"+{line}\n" for line in string.split("\n"))
        handle.write(f"\n# {datetime.datetime.now()}\n{lines}".encode("utf-8", errors="replace"))


def _reason(error: OSError) -> str:
    if error.errno == errno.ELOOP:  # O_NOFOLLOW met a link
        return "it is a symbolic link; the history is never written through one"
    return error.strerror or str(error)


def _history_note(path, reason: str) -> str:
    return f"note: history kept in memory only: cannot use '{path}' ({reason})"
