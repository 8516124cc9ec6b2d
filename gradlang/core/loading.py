"""load("w.npy"), load("f.npz", "W"), load("x.csv"): numbers from a file (section 6, data).

A file is read as data and nothing else: `.npy` and `.npz` through NumPy with
allow_pickle=False (an object array or a pickle is refused, never run), `.csv`
as comma-separated numbers. The value is a float64 array, as linspace gives
(of any rank, section 3b), to be given to a declared vector or matrix in `at`. The
name is relative to the working directory. As `--plot-dir` never follows a
symlink where it writes (render/emit.py; the directories on the way may be
links), load never follows one where it reads: the file is opened with
O_NOFOLLOW (and O_NONBLOCK, so a pipe cannot hang it) and must be a regular
file of at most limits.max_memory() bytes (an `.npz` member too, once
uncompressed: its size is checked before it is inflated). The grammar's
STRING has no quote, `#`, `;` or bracket inside (grammar/gradlang.lark).
"""

from __future__ import annotations

import builtins as python
import io
import math
import os
import stat
import warnings

from gradlang import limits
from gradlang.core.builtin_table import Call, builtin
from gradlang.core.builtins_vectors import placed
from gradlang.errors import LimitError, ShapeError, ValueError, without_internal_paths
from gradlang.expr.exact import to_sympy_number
from gradlang.lazy import np

READS_TEXT = frozenset({"load", "einsum"})  # builtins whose quoted arguments the evaluator passes as text
FORMATS = (".npy", ".npz", ".csv")


def _free(size: int) -> None:
    """The charge of a load outside any statement: none (Session.bind's arrays are checked as they come)."""


def read_array(path: str, member: str | None = None, charge=_free):
    """The numbers of a .npy, .npz member or .csv file: a float64 array (a float for one number).

    `charge(bytes)` is told the size of the float64 array before it is read
    (from the .npy header), so a statement's loads are bounded together."""
    suffix = os.path.splitext(path)[1].lower()
    if suffix not in FORMATS:
        raise ValueError(f'load reads .npy, .npz and .csv files, not "{path}"')
    if (member is None) != (suffix != ".npz"):
        raise ValueError(f'an .npz file holds named arrays: load("{path}", "name")' if member is None
                         else f"only an .npz file has named arrays; write load(\"{path}\")")
    if suffix == ".npy":  # read by NumPy straight into the array: a large file is never held twice
        return _numbers(_opened(path, lambda fd, size: _npy_file(fd, path, size, charge)), path)
    data = read_bytes(path)
    if suffix == ".npz":
        data = _member(data, member, path)
        return _numbers(_npy(io.BytesIO(data), path, len(data), charge), path)
    array = _csv(data, path)
    _check_numbers(array.dtype, array.shape, f'"{path}"')
    charge(8 * array.size)
    return _numbers(array, path)


def read_bytes(path: str) -> bytes:
    """The bytes of a regular file, refusing a symlink, a device or pipe, and a file above the limit."""
    return _opened(path, _read_all)


def _opened(path: str, read):
    """read(fd, size) of a regular file, refusing a symlink, a device or pipe, and a file above the limit."""
    if "\0" in path:  # no file name holds one (os.open would raise Python's ValueError)
        raise ValueError(f'"{path.replace(chr(0), "<NUL>")}" is not a file name: it holds a NUL character')
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError as error:
        raise ValueError(_unreadable(path, error)) from None
    try:
        status = os.fstat(fd)
        if not stat.S_ISREG(status.st_mode):
            raise ValueError(f'"{path}" is not a regular file')
        _check_size(status.st_size, f'"{path}"')
        return read(fd, status.st_size)
    finally:
        os.close(fd)


def _read_all(fd: int, size: int) -> bytes:
    """Up to `size` bytes (a read may return fewer than asked)."""
    chunks, left = [], size
    while left > 0:
        chunk = os.read(fd, left)
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _unreadable(path: str, error: OSError) -> str:
    if os.path.islink(path):
        return f'"{path}" is a symbolic link; load reads a file itself, never through a link'
    if isinstance(error, FileNotFoundError):
        return f'there is no file "{path}" (names are relative to the working directory, {os.getcwd()})'
    return f'cannot open "{path}": {error.strerror or error}'


def _check_size(size: int, what: str) -> None:
    if size > limits.max_memory():
        raise LimitError(limits.memory_refusal(f"reading {what} ({size} bytes)", size))


def _member(data: bytes, member: str, path: str) -> bytes:
    """One array of an .npz archive, its uncompressed size checked before it is read."""
    import zipfile  # on the first .npz: a run that loads none does not import it (start-up, issue #41)

    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        names = [n[:-4] for n in archive.namelist() if n.endswith(".npy")]
        if member not in names:
            raise ValueError(f'"{path}" has no array named "{member}"; it has {listed(sorted(names))}')
        info = archive.getinfo(member + ".npy")
        _check_size(info.file_size, f'"{member}" of "{path}"')
        return archive.read(info)
    except (zipfile.BadZipFile, python.ValueError, OSError, EOFError, RuntimeError, NotImplementedError) as error:
        raise ValueError(f'cannot read "{path}" as an .npz file: {bounded_text(str(error))}') from None


def _npy_file(fd: int, path: str, size: int, charge):
    with os.fdopen(fd, "rb", closefd=False) as file:
        return _npy(file, path, size, charge)


def _npy(file, path: str, size: int, charge):
    """The array of an .npy stream, its header read and checked before any number is.

    np.load would trust the header: 80 bytes claiming 10^12 numbers made it
    allocate 7.28 TiB. Here the count is checked against the limit and against
    the bytes that follow before the numbers are read, and an object array
    (a pickle) is refused from its dtype."""
    shape, fortran, dtype = _header(file, path)
    if dtype.hasobject:
        raise ValueError(f'"{path}" holds Python objects (a pickle); load reads numbers only')
    _check_numbers(dtype, shape, f'"{path}"')
    count = math.prod(shape)
    charge(8 * count)
    if size - file.tell() < count * dtype.itemsize:
        raise ValueError(f'"{path}" is cut short: its header promises {count} numbers of {dtype.itemsize} bytes, '
                         f"but only {max(size - file.tell(), 0)} bytes follow")
    array = _read_numbers(file, dtype, count)
    return array.reshape(shape, order="F" if fortran else "C")


def _header(file, path: str):
    """(shape, Fortran order, dtype) of an .npy header; anything else is not an .npy file."""
    from numpy.lib import format as npy

    try:
        version = npy.read_magic(file)
    except (python.ValueError, OSError, EOFError):
        raise ValueError(f'"{path}" is not a valid .npy file (it does not begin as one)') from None
    read = npy.read_array_header_1_0 if version == (1, 0) else npy.read_array_header_2_0
    try:
        return read(file)
    except (python.ValueError, OSError, EOFError, SyntaxError, TypeError) as error:
        raise ValueError(f'"{path}" is not a valid .npy file: its header is wrong ({bounded_text(str(error))})') from None


def _check_numbers(dtype, shape: tuple, what: str) -> None:
    """Real numbers, at most limits.MAX_RANK axes, their float64 copy within limits.max_memory(): known from a header alone."""
    if dtype.kind not in "biuf":
        raise ValueError(f"{what} holds {dtype} values; gradlang takes real numbers only")
    if len(shape) > limits.MAX_RANK:
        raise ShapeError(f"{what} holds an array of shape {shape}; values have at most {limits.MAX_RANK} axes")
    count = math.prod(shape)
    if 8 * count > limits.max_memory():
        raise LimitError(limits.memory_refusal(f"{what} holds {count} numbers: as floats, it", 8 * count))


def _read_numbers(file, dtype, count: int):
    """`count` numbers of `dtype` from a file (straight into the array) or another stream."""
    if isinstance(file, io.BufferedReader):
        array = np.fromfile(file, dtype=dtype, count=count)
    else:
        array = np.frombuffer(file.read(count * dtype.itemsize), dtype=dtype, count=count).copy()
    return array


SHOWN_NAMES = 10  # names of an archive's arrays a message lists


def listed(names: list) -> str:
    """At most SHOWN_NAMES names, each cut short, and how many more: an archive may hold 20 000."""
    shown = ", ".join(bounded_text(name, 40) for name in names[:SHOWN_NAMES]) or "none"
    more = len(names) - SHOWN_NAMES
    return f"{shown} and {more} more" if more > 0 else shown


def bounded_text(text: str, limit: int = 200) -> str:
    """A library's message cut to `limit` characters (it may quote a whole header), naming no internal file."""
    text = without_internal_paths(text)
    return text if len(text) <= limit else text[:limit] + "…"


def _csv(data: bytes, path: str):
    """Comma-separated numbers, one row per line (# starts a comment, as in np.loadtxt)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "input contained no data": refused below as empty
            return np.loadtxt(io.StringIO(data.decode("utf-8")), delimiter=",", dtype=float)
    except (python.ValueError, UnicodeDecodeError) as error:
        raise ValueError(f'"{path}" is not a table of numbers: {bounded_text(str(error))}') from None


def _numbers(array, path: str):
    return _real(array, f'"{path}"', copy=False)


def _real(array, what: str, copy: bool):
    """Real numbers only (booleans and integers become floats), at most limits.MAX_RANK axes, at least one number:
    a number for a 0-d array, else a float64 array (a copy of its own when `copy`)."""
    if array.dtype.kind not in "biuf":
        raise ValueError(f"{what} holds {array.dtype} values; gradlang takes real numbers only")
    if array.ndim > limits.MAX_RANK:
        raise ShapeError(f"{what} holds an array of shape {array.shape}; values have at most {limits.MAX_RANK} axes")
    if array.size == 0:
        raise ValueError(f"{what} holds no numbers: gradlang has no empty vectors")
    if array.ndim == 0:
        return to_sympy_number(float(array))
    return np.array(array, dtype=np.float64, order="C", copy=True) if copy else np.ascontiguousarray(array, dtype=np.float64)


def _text(call: Call, index: int) -> str:
    value = call.args[index]
    if not isinstance(value, str):
        raise ValueError('load takes a file name in quotes: load("w.npy")')
    return value


@builtin("load", 1, 2, 'numbers from a .npy, .npz (load("f.npz", "W")) or .csv file, as floats',
         'load("weights.npy")', "data", conditions=(0, 1))
def _load(call: Call):
    """A file named twice in one statement (`at x = load("v.npy"), y = load("v.npy")`) is read, and charged, once:
    nothing writes into a loaded array. The next statement reads it again (the file may have changed)."""
    path = placed(call, 0, _text, call, 0)
    member = placed(call, 1, _text, call, 1) if len(call.args) == 2 else None
    key = (os.path.abspath(path), member)
    if key not in call.services.files:
        call.services.files[key] = placed(call, 0, read_array, path, member, call.services.charge_load)
    return call.services.files[key]


def array_value(value, name: str):
    """A NumPy array given from Python (Session.bind) as load gives one: a float64 copy, checked alike.

    Real numbers only, at most limits.MAX_RANK axes, at least one number; the copy is the
    session's own, so changing the caller's array later changes nothing bound."""
    if not isinstance(value, np.ndarray):
        return value
    return _real(value, f"the array bound to '{name}'", copy=True)
