"""Reading a program's text, from a file, standard input or the command line; writing a file the user names.

Every shell reads programs through here so they all refuse the same things
the same way: a device or a directory instead of a file (`gradlang /dev/zero`
must not read until memory runs out), a program over MAX_SOURCE_BYTES, and
bytes that are not UTF-8. A UTF-8 byte-order mark, which some editors write,
is accepted and dropped; line endings are read as Python reads text files.

A file written at the user's word (`:export numpy out.py`) is a regular file,
written whole, or nothing: a symbolic link is refused, not followed (it could
point at any file the user may write), and so are a named pipe (which would
block until someone reads it) and a device; a write that fails (a full disk,
`ulimit -f`) leaves no truncated file behind.
"""

from __future__ import annotations

import errno
import os
import stat
import tempfile

MAX_SOURCE_BYTES = 2 * 1024 * 1024  # 2 MiB: far beyond any teaching program, far below memory


class SourceError(Exception):
    """A file that cannot be read or written; the message says why, for the user.

    `kind` is how JSON names it: a program over the size limit is a LimitError
    (section 9), anything else a usage error."""

    def __init__(self, message: str, kind: str = "UsageError"):
        super().__init__(message)
        self.kind = kind


def read_file(path: str) -> str:
    """The program in the regular file `path`."""
    try:
        fd = os.open(os.path.expanduser(path), os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as error:
        raise SourceError(f"cannot read '{path}': {error.strerror or error}") from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        kind = "it is a directory" if stat.S_ISDIR(mode) else "not a regular file (a device, a pipe or a socket)"
        raise SourceError(f"cannot read '{path}': {kind}")
    with os.fdopen(fd, "rb") as handle:
        return decode(_read_bounded(handle, path), path)


def write_file(path: str, text: str) -> None:
    """`text` as UTF-8 in the regular file `path`, whole or not at all (see the module docstring).

    It is written to a new file beside `path` (mkstemp: a random name, O_EXCL)
    and renamed over it, so a full disk or `ulimit -f` leaves the old file, or
    none, never a truncated module; the new file is removed on any failure.
    A link at `path` is refused (the rename would replace it, not follow it,
    but the user named a link), and so is anything but a regular file."""
    target = os.path.expanduser(path)
    _check_target(path, target)
    directory = os.path.dirname(target) or "."
    try:
        fd, temporary = tempfile.mkstemp(prefix=".gradlang-", suffix=".tmp", dir=directory)
    except OSError as error:
        raise SourceError(f"cannot write '{path}': {_refused(error)}") from None
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(text.encode("utf-8"))
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temporary, 0o666 & ~_umask())
        os.replace(temporary, target)
    except OSError as error:
        _remove(temporary)
        raise SourceError(f"cannot write '{path}': {error.strerror or error}") from None
    except BaseException:
        _remove(temporary)
        raise


def _check_target(path: str, target: str) -> None:
    """Refuse a link, a directory, a pipe or a device where the file would go (a missing one is fine)."""
    try:
        mode = os.lstat(target).st_mode
    except FileNotFoundError:
        return
    except OSError as error:
        raise SourceError(f"cannot write '{path}': {_refused(error)}") from None
    if stat.S_ISLNK(mode):
        raise SourceError(f"cannot write '{path}': {_refused(OSError(errno.ELOOP, 'a link'))}")
    if stat.S_ISDIR(mode):
        raise SourceError(f"cannot write '{path}': it is a directory")
    if not stat.S_ISREG(mode):
        raise SourceError(f"cannot write '{path}': not a regular file (a device, a pipe or a socket)")


def _remove(temporary: str) -> None:
    try:
        os.unlink(temporary)
    except OSError:
        pass  # gone already, or its folder is: nothing is left to clean


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _refused(error: OSError) -> str:
    """Why a file could not be opened for writing, in the user's terms."""
    if error.errno == errno.ELOOP:  # O_NOFOLLOW met a link at the last component
        return "it is a symbolic link (write to the file it points to by its own name)"
    if error.errno == errno.ENXIO:  # O_NONBLOCK: a named pipe that nobody reads
        return "not a regular file (a named pipe)"
    if error.errno == errno.EISDIR:
        return "it is a directory"
    return error.strerror or str(error)


def read_stream(stream, name: str = "standard input") -> str:
    """The program on a binary stream (standard input), up to the size limit."""
    return decode(_read_bounded(stream, name), name)


def from_argument(code: str, name: str = "-e") -> str:
    """A program given on the command line; arguments that were not UTF-8 are refused."""
    try:
        data = code.encode("utf-8")
    except UnicodeEncodeError:
        # Python keeps undecodable argument bytes as lone surrogates; they are not text.
        raise SourceError(f"{name}: the program is not valid UTF-8") from None
    return decode(data, name)


def _read_bounded(handle, name: str) -> bytes:
    try:
        data = handle.read(MAX_SOURCE_BYTES + 1)
    except OSError as error:
        raise SourceError(f"cannot read '{name}': {error.strerror or error}") from None
    if len(data) > MAX_SOURCE_BYTES:
        raise SourceError(f"cannot read '{name}': larger than {MAX_SOURCE_BYTES // (1024 * 1024)} MiB, the limit for a program", "LimitError")
    return data


def decode(data: bytes, name: str) -> str:
    """UTF-8 text with the byte-order mark dropped and line endings made '\\n'."""
    if len(data) > MAX_SOURCE_BYTES:
        raise SourceError(f"{name}: larger than {MAX_SOURCE_BYTES // (1024 * 1024)} MiB, the limit for a program", "LimitError")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        raise SourceError(f"'{name}' is not UTF-8 text (byte 0x{data[error.start]:02X} on line {line})") from None
    return text.replace("\r\n", "\n").replace("\r", "\n")
