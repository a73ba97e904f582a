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
    assert mapped == {"engine.lab.scenarios": "scenarios", "cblab.entry": "."}
    assert all((ROOT / folder).is_dir() and name in SETUPTOOLS["packages"] for name, folder in mapped.items())
    assert SETUPTOOLS["package-data"]["engine.lab.scenarios"] == ["*.toml", "README.md", "traces/*.toml"]
    assert (ROOT / "scenarios" / "course.toml").is_file()


def test_the_installed_entry_is_the_checkout_s_app_py_with_its_settings():
    """`cblab.entry` maps the root, so the wheel carries app.py and .streamlit/config.toml as cblab/entry/: the
    root's only Python file must be app.py, or the wheel would carry others; a checkout runs its own app.py."""
    from cblab.cli.app_command import entry

    assert [path.name for path in ROOT.glob("*.py")] == ["app.py"]
    assert SETUPTOOLS["package-data"]["cblab.entry"] == [".streamlit/config.toml"]
    assert (ROOT / ".streamlit" / "config.toml").is_file()
    assert entry() == ROOT / "app.py"
