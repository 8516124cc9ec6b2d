"""load(): numbers from .npy, .npz and .csv files, for `at` (language reference, section 6, data).

Files are written by NumPy in a temporary working directory; the values
gradlang computes from them are checked against NumPy on the same arrays,
and every file that is not numbers (a pickle, an object array, text, a
symlink, too large) is a placed error.
"""

from __future__ import annotations

import os
import pickle

import numpy as np
import pytest

from gradlang import GradlangError, Session, limits
from tests.conftest import as_floats

W = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]])
B = np.array([0.1, -0.2])


@pytest.fixture
def folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    np.save("w.npy", W)
    np.save("ints.npy", np.arange(3))
    np.savez_compressed("layer.npz", W=W, b=B)
    np.savetxt("w.csv", W, delimiter=",")
    (tmp_path / "row.csv").write_text("1, 2.5, -3\n")
    return tmp_path


def _value(source: str) -> np.ndarray:
    return as_floats(Session().eval(source))


def test_a_matrix_from_npy_in_at(folder):
    got = _value('W: R^(2,3); x: R^3\ngrad(sum(tanh(W @ x)), W) at W = load("w.npy"), x = [1.0, 2.0, -1.0]')
    x = np.array([1.0, 2.0, -1.0])
    np.testing.assert_allclose(got, np.outer(1 - np.tanh(W @ x) ** 2, x), rtol=1e-12)


def test_npz_members_and_csv(folder):
    got = _value('W: R^(2,3); b: R^2\nsum((W @ [1, 1, 1] + b)^2) at W = load("layer.npz", "W"), b = load("layer.npz", "b")')
    np.testing.assert_allclose(got, np.sum((W @ np.ones(3) + B) ** 2), rtol=1e-12)
    np.testing.assert_allclose(_value('load("w.csv")'), W, rtol=1e-15)
    np.testing.assert_allclose(_value('load("row.csv")'), [1.0, 2.5, -3.0])


def test_integers_become_floats_and_a_scalar_takes_many(folder):
    assert _value('load("ints.npy")').tolist() == [0.0, 1.0, 2.0]
    assert _value('x^2 at x = load("ints.npy")').tolist() == [0.0, 1.0, 4.0]


def _error(source: str) -> GradlangError:
    with pytest.raises(GradlangError) as caught:
        Session().run(source)
    return caught.value


def _write_bad_files(folder):
    np.save("objects.npy", np.array([{"a": 1}], dtype=object), allow_pickle=True)
    (folder / "pickled.npy").write_bytes(pickle.dumps([1.0, 2.0]))
    (folder / "words.csv").write_text("a,b\n1,2\n")
    (folder / "ragged.csv").write_text("1,2\n3\n")
    (folder / "empty.csv").write_text("")
    np.save("complex.npy", np.array([1 + 2j]))
    np.save("cube.npy", np.zeros((1,) * 33))  # above limits.MAX_RANK axes
    (folder / "notes.txt").write_text("1")
    (folder / "broken.npz").write_bytes(b"not a zip")
    os.symlink("w.npy", "link.npy")
    os.mkdir("folder.npy")


@pytest.mark.parametrize(
    "source, kind, message",
    [
        ('load("objects.npy")', "ValueError", "Python objects (a pickle)"),
        ('load("pickled.npy")', "ValueError", '"pickled.npy" is not a valid .npy file (it does not begin as one)'),
        ('load("words.csv")', "ValueError", "not a table of numbers"),
        ('load("ragged.csv")', "ValueError", "not a table of numbers"),
        ('load("empty.csv")', "ValueError", "no numbers"),
        ('load("complex.npy")', "ValueError", "real numbers only"),
        ('load("cube.npy")', "ShapeError", "at most 32 axes"),
        ('load("missing.npy")', "ValueError", 'there is no file "missing.npy"'),
        ('load("notes.txt")', "ValueError", "reads .npy, .npz and .csv"),
        ('load("link.npy")', "ValueError", "symbolic link"),
        ('load("folder.npy")', "ValueError", "not a regular file"),
        ('load("broken.npz", "W")', "ValueError", "as an .npz file"),
        ('load("layer.npz")', "ValueError", 'load("layer.npz", "name")'),
        ('load("layer.npz", "V")', "ValueError", "no array named \"V\"; it has W, b"),
        ('load("w.npy", "W")', "ValueError", "only an .npz file"),
        ("load(3)", "ValueError", "file name in quotes"),
        ('sin("w.npy")', "ValueError", "only an argument of load"),
        ('f(a) = a\nf("w.npy")', "ValueError", "only an argument of load"),
        ('["w.npy"]', "ValueError", "only an argument of load"),
        ('W: R^(2,2)\nsum(W) at W = load("w.npy")', "ShapeError", "'W' is a 2×2 matrix but is given a 2×3 matrix"),
    ],
)
def test_anything_but_numbers_is_a_placed_error(folder, source, kind, message):
    _write_bad_files(folder)
    error = _error(source)
    assert error.kind == kind and message in error.message, error.format()
    assert error.line is not None and error.column is not None


def test_the_error_points_at_the_file_name(folder):
    error = _error('x = 1\ny = load("missing.npy")')
    assert (error.line, error.column) == (2, 10)


def test_a_quote_is_not_an_operand(folder):
    assert _error('"w.npy" + 1').kind == "SyntaxError"


def test_size_is_bounded_before_reading(folder, monkeypatch):
    np.savez_compressed("zeros.npz", Z=np.zeros((100, 100)))  # 80 kB of numbers in an archive of a few hundred bytes
    assert os.path.getsize("zeros.npz") < 2_000
    monkeypatch.setattr(limits, "MAX_MEMORY_BYTES", 2_000)
    assert _value('load("w.npy")').shape == (2, 3)
    big = _error('load("zeros.npz", "Z")')
    assert big.kind == "LimitError" and '"Z" of "zeros.npz"' in big.message
    monkeypatch.setattr(limits, "MAX_MEMORY_BYTES", 100)
    assert _error('load("w.npy")').kind == "LimitError"  # 48 bytes of numbers after a header of 128


def test_a_user_function_named_load_is_called_as_written(folder):
    error = _error('load(x) = x\nload("w.npy")')
    assert error.kind == "ValueError" and "only an argument of load" in error.message


def _claiming(name: str, shape: tuple, descr: str = "<f8", data: bytes = b"\0" * 8) -> None:
    """An .npy file whose header claims `shape`, followed by `data` only."""
    header = repr({"descr": descr, "fortran_order": False, "shape": shape}).encode("latin1")
    header += b" " * (118 - len(header)) + b"\n"
    with open(name, "wb") as file:
        file.write(b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header + data)


def test_the_header_is_checked_before_any_number_is_read(folder):
    """np.load trusted the header: 80 bytes claiming 10^12 numbers asked for 7.28 TiB."""
    _claiming("huge.npy", (10 ** 12,))
    error = _error('load("huge.npy")')
    assert error.kind == "LimitError" and (error.line, error.column) == (1, 6)
    assert error.message == ('"huge.npy" holds 1000000000000 numbers: as floats, it needs about 7450.6 GiB of memory, '
                             "above the limit of 4.0 GiB; raise it with --max-memory (Session(max_memory=...) in Python)")
    _claiming("short.npy", (100,))
    assert _error('load("short.npy")').message == (
        '"short.npy" is cut short: its header promises 100 numbers of 8 bytes, but only 8 bytes follow')
    _claiming("objects2.npy", (1,), descr="|O")
    assert "Python objects (a pickle)" in _error('load("objects2.npy")').message


def test_bytes_that_are_no_npy_file_are_not_called_a_pickle(folder):
    (folder / "noise.npy").write_bytes(bytes(range(256)) * 4)
    assert _error('load("noise.npy")').message == '"noise.npy" is not a valid .npy file (it does not begin as one)'


def test_fortran_order_and_small_integers_read_as_numpy_reads_them(folder):
    matrix = np.asfortranarray(np.arange(6.0).reshape(2, 3) / 7)
    np.save("fortran.npy", matrix)
    np.save("bytes.npy", np.arange(-3, 3, dtype=np.int8).reshape(3, 2))
    np.testing.assert_array_equal(_value('load("fortran.npy")'), matrix)
    np.testing.assert_array_equal(_value('load("bytes.npy")'), np.arange(-3.0, 3.0).reshape(3, 2))


def test_a_nul_in_the_name_is_a_placed_error(folder):
    error = _error('load("a\0.npy")')
    assert error.kind == "ValueError" and error.message == '"a<NUL>.npy" is not a file name: it holds a NUL character'


def test_an_archive_of_many_arrays_lists_ten_names(folder):
    np.savez("many.npz", **{f"a{i:05d}": np.zeros(1) for i in range(20_000)})
    error = _error('load("many.npz", "zz")')
    assert error.message == ('"many.npz" has no array named "zz"; it has a00000, a00001, a00002, a00003, a00004, '
                             "a00005, a00006, a00007, a00008, a00009 and 19990 more")


def test_the_limit_of_a_declared_tensor_holds_for_a_loaded_array(folder, monkeypatch):
    """A 121 MB int8 file became a 968 MB float64 copy: the count is bounded as a declaration's is."""
    np.save("bytes.npy", np.zeros((30, 40), dtype=np.int8))
    np.savetxt("table.csv", np.zeros((30, 40)), delimiter=",", fmt="%d")  # 2400 bytes of text
    monkeypatch.setattr(limits, "MAX_MEMORY_BYTES", 8 * 1199)
    for name in ("bytes.npy", "table.csv"):
        error = _error(f'load("{name}")')
        assert error.kind == "LimitError" and "holds 1200 numbers: as floats, it needs about 9600 bytes of memory, " \
            "above the limit of 9592 bytes; raise it with --max-memory" in error.message


def test_a_file_loaded_twice_in_one_statement_is_read_once(folder, monkeypatch):
    """Issue #41: `load` reads a file once per `at`; the next statement reads it again."""
    from gradlang.core import loading

    np.save("v.npy", np.arange(100.0))
    reads = []
    original = loading.read_array
    monkeypatch.setattr(loading, "read_array", lambda *a: reads.append(a[0]) or original(*a))
    session = Session()
    program = 'x: R^n; y: R^n\nsum(x*y) at x = load("v.npy"), y = load("v.npy")'
    for _ in range(2):
        np.testing.assert_allclose(float(session.run(program)[-1].value), np.arange(100.0) @ np.arange(100.0))
    assert reads == ["v.npy", "v.npy"]


def test_the_loads_of_one_statement_share_one_bound(folder, monkeypatch):
    np.save("v.npy", np.arange(100.0))
    np.save("u.npy", np.arange(100.0))
    np.save("w.npy", np.arange(100.0))
    x = np.arange(100.0)
    np.testing.assert_allclose(_value('x: R^n; y: R^n\nsum(x*y) at x = load("v.npy"), y = load("v.npy")'), x @ x)
    monkeypatch.setattr(limits, "MAX_MEMORY_BYTES", 8 * 250)
    error = _error('x: R^n; y: R^n; z: R^n\nsum(x*y*z) at x = load("v.npy"), y = load("u.npy"), z = load("w.npy")')
    assert error.kind == "LimitError" and (error.line, error.column) == (2, 62)
    assert "loading these arrays as floats needs about 2400 bytes of memory, above the limit of 2000" in error.message
    error = _error('f(a) = load("v.npy") + load("u.npy") + load("w.npy")\nsum(f(1))')  # inside a user function too
    assert error.kind == "LimitError"
