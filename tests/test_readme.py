"""The README's Python example runs and does what its comments say."""

import pathlib
import re

README = pathlib.Path(__file__).resolve().parent.parent / "README.md"


def test_readme_example_runs():
    code = re.search(r"```python\n(.*?)```", README.read_text(), re.S).group(1)
    namespace: dict = {}
    exec(code.replace("print(", "(lambda *a: None)("), namespace)
    assert [len(r) for r in namespace["results"]] == [2, 3, 4, 2]
    admits = [(e.step, e.slot, e.request_id) for e in namespace["engine"].event_log if e.kind == "admit"]
    assert admits == [(0, 0, "r0"), (0, 1, "r1"), (1, 0, "r2"), (3, 0, "r3")]


def test_readme_quick_start_has_exactly_the_two_commands():
    quick = README.read_text().split("## Quick start")[1].split("\n## ")[0]
    blocks = re.findall(r"```bash\n(.*?)```", quick, re.S)
    assert [b.strip() for b in blocks] == [
        "python -m pip install -e . && streamlit run app.py",
        'python -m pip install -e ".[test]" && python -m pytest',
    ]


def test_the_practice_section_names_every_check_and_points_at_the_adapters():
    from engine.practice.checker.checks import CHECKS

    practice = (README.parent / "docs" / "practice.md").read_text().split("## Practice mode")[1].split("\n## ")[0]
    assert [words for words in CHECKS.values() if f"| {words} |" not in practice] == []
    assert "[`docs/adapters.md`](adapters.md)" in practice
    docs = README.parent / "docs"
    for name in ("template.py", "model_next_adapter.py", "add_request_adapter.py"):
        assert (docs / "adapters" / name).is_file() and f"(adapters/{name})" in (docs / "adapters.md").read_text()


LINK = re.compile(r"\]\(([^)\s]+)\)")


def test_the_readme_is_a_first_screen_and_every_relative_link_of_it_and_of_docs_resolves():
    assert len(README.read_text().splitlines()) <= 200
    broken = []
    for page in [README, *sorted((README.parent / "docs").glob("*.md"))]:
        for target in LINK.findall(page.read_text()):
            if not re.match(r"(https?:|mailto:|#)", target) and not (page.parent / target.split("#")[0]).exists():
                broken.append(f"{page.name}: {target}")
    assert broken == []
