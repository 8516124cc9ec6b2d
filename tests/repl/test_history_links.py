"""The REPL's history is never written through a symbolic link (issue #38), as :export refuses one.

A link at the history path is refused when the REPL starts (in-memory history
and one note), and a link put there later is refused when a line is stored
(the note once); the file the link points to keeps its bytes.
"""

from __future__ import annotations

import pytest

pytest.importorskip("prompt_toolkit")

from prompt_toolkit.history import InMemoryHistory  # noqa: E402

from gradlang.shell.history import file_history  # noqa: E402


def test_a_link_at_the_history_path_is_refused_with_one_note(tmp_path, monkeypatch):
    target = tmp_path / "precious.txt"
    target.write_text("precious\n", encoding="utf-8")
    link = tmp_path / "history"
    link.symlink_to(target)
    monkeypatch.setenv("GRADLANG_HISTORY", str(link))
    history, note = file_history()
    assert isinstance(history, InMemoryHistory)
    assert note == (f"note: history kept in memory only: cannot use '{link}' "
                    "(it is a symbolic link; the history is never written through one)")
    history.store_string("1 + 1")
    assert target.read_text(encoding="utf-8") == "precious\n" and link.is_symlink()


def test_a_link_put_there_later_is_refused_once(tmp_path, monkeypatch, capsys):
    path = tmp_path / "history"
    monkeypatch.setenv("GRADLANG_HISTORY", str(path))
    history, note = file_history()
    assert note is None
    history.store_string("x = 1\ny = 2")
    assert list(history.load_history_strings()) == ["x = 1\ny = 2"]
    target = tmp_path / "precious.txt"
    target.write_text("precious\n", encoding="utf-8")
    path.unlink()
    path.symlink_to(target)
    history.store_string("z = 3")
    history.store_string("w = 4")
    assert target.read_text(encoding="utf-8") == "precious\n"
    assert capsys.readouterr().err.count("symbolic link") == 1
