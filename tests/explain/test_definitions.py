"""explain shows the user functions unfolded into the differentiated expression."""

from gradlang import Session
from gradlang.render import to_json, to_latex, to_plain, to_rich
from rich.console import Console


def _explanation(program: str):
    return Session().run(program)[-1].steps[0]


def test_definitions_are_shown_in_every_format():
    explanation = _explanation("f(v) = v^2 * sg(v)\ng(a) = f(a) + 1\nexplain diff(g(x), x)")
    assert "definition: g(a) = f(a) + 1" in to_plain(explanation)
    assert "definition: f(v) = v^2 * sg(v)" in to_plain(explanation)
    assert r"\texttt{f(v) = v\^{}2 * sg(v)}" in to_latex(explanation)
    console = Console(width=100, color_system=None, record=True)
    console.print(to_rich(explanation))
    assert "definition: g(a) = f(a) + 1" in console.export_text()
    assert to_json(explanation)["definitions"] == ["g(a) = f(a) + 1", "f(v) = v^2 * sg(v)"]


def test_only_functions_of_the_differentiated_argument_count():
    explanation = _explanation("f(v) = v^2\nh(v) = 3\nexplain diff(f(x), x) + h(1)")
    assert to_json(explanation)["definitions"] == ["f(v) = v^2"]
