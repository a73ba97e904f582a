"""The project as a package: pyproject.toml installs every package folder, and the lessons from scenarios/."""

import pathlib
import tomllib

ROOT = pathlib.Path(__file__).resolve().parent.parent
SETUPTOOLS = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]


def test_pyproject_lists_every_package_folder_and_maps_the_lessons():
    """Every folder of engine/ and cblab/ with an __init__.py is listed (a new one fails here until it is), and
    the listed packages with a folder elsewhere (`package-dir`) name existing folders."""
    mapped = SETUPTOOLS["package-dir"]
    folders = {
        ".".join(init.parent.relative_to(ROOT).parts)
        for top in ("engine", "cblab")
        for init in (ROOT / top).rglob("__init__.py")
    }
    assert sorted(set(SETUPTOOLS["packages"]) - set(mapped)) == sorted(folders)
    assert mapped["engine.lab.scenarios"] == "scenarios"
    assert all((ROOT / folder).is_dir() and name in SETUPTOOLS["packages"] for name, folder in mapped.items())
    assert SETUPTOOLS["package-data"]["engine.lab.scenarios"] == ["*.toml", "README.md", "traces/*.toml"]
    assert (ROOT / "scenarios" / "course.toml").is_file()
