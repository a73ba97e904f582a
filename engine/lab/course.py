"""The course: the built-in scenarios as chapters of numbered lessons (`scenarios/course.toml`).

    [[chapter]]
    title = "Part 1 and Part 2 of the seeds"
    intro = "..."            # optional, shown with each of the chapter's lessons
    lessons = ["part1-basic-batch", "part2-slot-refill"]

Lesson "3.2" is the second lesson of the third chapter. Every built-in scenario belongs
to exactly one chapter, and every name in a chapter is a built-in scenario: loading the
course checks both and raises `ScenarioError` naming the chapter and the scenario, so a
new scenario file cannot be left out of the course, nor a deleted one left in it.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from ..core.validation import parse_text
from .scenario import COURSE_FILE, SCENARIO_DIR, list_scenarios, load_scenario
from .shared_cache import shared_cache
from .toml_reader import ScenarioError, Table

MAX_CHAPTERS = 50


@dataclass(frozen=True)
class Lesson:
    name: str  # the scenario's file stem
    number: str  # "3.2"
    title: str  # the scenario's title
    chapter: int  # 0-based index into Course.chapters
    quizzes: int  # its [[quiz]] tables

    @property
    def label(self) -> str:
        return f"{self.number} {self.title}"


@dataclass(frozen=True)
class Chapter:
    title: str
    intro: str
    lessons: tuple[str, ...]


@dataclass(frozen=True)
class Course:
    chapters: tuple[Chapter, ...]
    lessons: tuple[Lesson, ...]  # in course order

    def lesson(self, key: str) -> Lesson | None:
        """The lesson named `key` (a scenario name, or its number such as "3.2"), or None."""
        return next((lesson for lesson in self.lessons if key in (lesson.name, lesson.number)), None)

    def following(self, name: str) -> Lesson | None:
        """The lesson after `name` in course order (None after the last, or for a name not in the course)."""
        names = [lesson.name for lesson in self.lessons]
        at = names.index(name) + 1 if name in names else len(names)
        return self.lessons[at] if at < len(names) else None

    def chapter_of(self, name: str) -> Chapter:
        return self.chapters[self.lesson(name).chapter]


@shared_cache()
def load_course(directory: Path = SCENARIO_DIR) -> Course:
    """Read and check `course.toml` against the scenario files beside it (cached: built-ins do not change)."""
    path = directory / COURSE_FILE
    source = f"scenarios/{COURSE_FILE}"
    try:
        data = parse_text(tomllib.loads, path.read_text(encoding="utf-8"), tomllib.TOMLDecodeError)
    except (OSError, ValueError) as exc:
        raise ScenarioError(f"{source}: cannot read the course ({exc})") from None
    top = Table(source, data)
    chapters = tuple(_chapter(t) for t in top.tables("chapter", MAX_CHAPTERS))
    top.check_no_unknown_keys()
    if not chapters:
        raise top.fail("chapter", "must list at least one chapter ([[chapter]])")
    files = {path.stem for path in list_scenarios(directory)}
    placed: dict[str, int] = {}
    lessons = []
    for c, chapter in enumerate(chapters):
        for n, name in enumerate(chapter.lessons):
            where = f"chapter[{c}].lessons[{n}]"
            if name not in files:
                raise ScenarioError(f"{source}: {where}: no scenario file scenarios/{name}.toml")
            if name in placed:
                raise ScenarioError(f"{source}: {where}: {name} is already in chapter[{placed[name]}]")
            placed[name] = c
            scenario = load_scenario(directory / f"{name}.toml")
            lessons.append(Lesson(name, f"{c + 1}.{n + 1}", scenario.title, c, len(scenario.quizzes)))
    missing = sorted(files - set(placed))
    if missing:
        raise ScenarioError(f"{source}: scenarios/{missing[0]}.toml is in no chapter: add it to a chapter's lessons")
    return Course(chapters, tuple(lessons))


def _chapter(t: Table) -> Chapter:
    lessons = t.raw("lessons")
    if not isinstance(lessons, list) or not lessons or not all(isinstance(name, str) for name in lessons):
        raise t.fail("lessons", "must be a non-empty list of scenario names", lessons)
    chapter = Chapter(t.str("title"), t.str("intro", ""), tuple(lessons))
    t.check_no_unknown_keys()
    return chapter
