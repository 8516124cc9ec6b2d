"""Messages name only the user's files (issue #38): an InternalError, or a library's message quoted in an
error, never shows an absolute path of gradlang's package, of Python's or a library's files, or of a temporary
folder; the file's own name stays, and GRADLANG_DEBUG=1 still shows the whole traceback."""

from __future__ import annotations

import os
import tempfile

import numpy as np
import pytest

import gradlang
from gradlang import GradlangError, Session
from gradlang.core import loading
from gradlang.shell.loop import as_internal

INTERNAL = [
    os.path.join(os.path.dirname(np.__file__), "lib", "_npyio_impl.py"),
    os.path.join(os.path.dirname(gradlang.__file__), "expr", "numeric.py"),
    os.path.join(tempfile.gettempdir(), "tmpk3j2x", "module.py"),
]


@pytest.mark.parametrize("path", INTERNAL)
def test_an_internal_error_names_no_internal_path(path, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)

    def broken(*args):
        raise FileNotFoundError(2, "No such file or directory", path)

    monkeypatch.setattr(loading, "read_array", broken)
    with pytest.raises(GradlangError) as caught:
        Session().run('load("w.npy")')
    message = caught.value.message
    assert caught.value.kind == "InternalError" and os.path.dirname(path) not in message
    assert message == ("gradlang failed on this statement (FileNotFoundError: [Errno 2] No such file or directory: "
                       f"'{os.path.basename(path)}')")
    shown = as_internal(OSError(f"cannot open {path} for reading")).message
    assert shown == f"OSError: cannot open {os.path.basename(path)} for reading"


def test_the_users_own_paths_stay_whole():
    shown = as_internal(OSError("cannot open /home/someone/data/w.npy")).message
    assert shown == "OSError: cannot open /home/someone/data/w.npy"
