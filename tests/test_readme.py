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
FENCE = re.compile(r"^(```|~~~).*?^\1", re.S | re.M)
CODE_SPAN = re.compile(r"(`+)(?!`).*?(?<!`)\1(?!`)", re.S)
HEADING = re.compile(r"^#{1,6}[ \t]+(.+?)[ \t]*#*[ \t]*$", re.M)
HTML_ID = re.compile(r"""<[^>]*\b(?:id|name)=["']([^"']+)["']""")


def without_code(markdown: str) -> str:
    """The text outside fenced code blocks and code spans (a link or a heading in code is not one)."""
    return CODE_SPAN.sub("", FENCE.sub("", markdown))


def anchors(markdown: str) -> set[str]:
    """The `#anchors` GitHub gives the page's headings: the heading's text as shown, lowercased, with
    everything but letters, digits, `_`, `-` and spaces taken out, spaces made `-`; a repeated one
    gets -1, -2, ...; and the ids of its HTML elements."""
    found, seen = set(), {}
    for heading in HEADING.findall(FENCE.sub("", markdown)):
        text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link shows its text
        text = re.sub(r"<[^>]+>|[`*]", "", text)
        slug = re.sub(r"[^\w\- ]", "", text.strip().lower()).replace(" ", "-")
        found.add(f"{slug}-{seen[slug]}" if slug in seen else slug)
        seen[slug] = seen.get(slug, 0) + 1
    return found | set(HTML_ID.findall(markdown))


def broken_links(page: pathlib.Path) -> list[str]:
    """`page`'s relative links (outside code) whose file is missing, or whose `#anchor` no heading of the
    target Markdown page has (a link within the page: one of its own)."""
    broken = []
    for target in LINK.findall(without_code(page.read_text())):
        if re.match(r"(https?|mailto):", target):
            continue
        path, _, anchor = target.partition("#")
        file = (page.parent / path) if path else page
        if not file.exists():
            broken.append(f"{page.name}: {target}")
        elif anchor and file.suffix == ".md" and anchor not in anchors(file.read_text()):
            broken.append(f"{page.name}: {target} (no such heading)")
    return broken


def test_the_readme_is_a_first_screen_and_every_relative_link_of_it_and_of_docs_resolves():
    assert len(README.read_text().splitlines()) <= 200
    pages = [README, *sorted((README.parent / "docs").glob("*.md")), README.parent / "scenarios" / "README.md"]
    assert [line for page in pages for line in broken_links(page)] == []


def test_the_link_check_finds_a_missing_file_and_a_missing_heading_and_skips_code(tmp_path):
    """GitHub's anchors: punctuation dropped, spaces made dashes, repeats numbered; code is not a link."""
    page = tmp_path / "page.md"
    page.write_text(
        "# The `cb-lab serve` command: one port!\n## Twice\n## Twice\n```md\n# Not a heading\n[x](gone.md)\n```\n"
        "[a](#the-cb-lab-serve-command-one-port) [b](#twice-1) [c](page.md#twice) `[d](gone.md)`\n"
        "[e](gone.md) [f](#not-a-heading) [g](page.md#nowhere) [h](https://example.com/#x)\n"
    )
    assert anchors(page.read_text()) == {"the-cb-lab-serve-command-one-port", "twice", "twice-1"}
    assert broken_links(page) == [
        "page.md: gone.md",
        "page.md: #not-a-heading (no such heading)",
        "page.md: page.md#nowhere (no such heading)",
    ]


def test_the_vectorised_table_quotes_the_stored_measurement():
    """The README's table of the vectorised step is `benchmarks/vectorised.py --write`'s stored run, rounded."""
    import json

    stored = json.loads((README.parent / "engine" / "lab" / "measurements" / "vectorised.json").read_text())
    table = {
        line.split("|")[1].strip(): [cell.strip() for cell in line.split("|")[2:-1]]
        for line in README.read_text().splitlines()
        if line.startswith(("| rows |", "| loop engine |", "| vectorised step |"))
    }
    columns = [stored["rows"].index(int(rows.replace(",", ""))) for rows in table["rows"]]

    def shown(values: list) -> list[str]:
        return ["-" if values[i] is None else f"{round(values[i]):,}" for i in columns]

    assert table["loop engine"] == shown(stored["loop_ns_per_token"])
    assert table["vectorised step"] == shown(stored["vectorised_ns_per_token"])
    assert f"overtakes the loop engine at {stored['crossover_rows']} rows" in README.read_text()
    assert f"is {stored['speedup_at_max_rows']:.1f}x faster at {stored['max_rows']:,}" in README.read_text()
