"""The stage and the page component are package assets (cblab/ui/components.py): a rerun names their files."""

import re
import tomllib

from cblab.ui.components import DECLARATION, declared
from cblab.ui.stage.stage import SCRIPTS, STAGE
from tests.helpers import start_app


def test_every_rerun_names_the_components_files_instead_of_carrying_them():
    app = start_app(lesson="part1-basic-batch")
    shown = {c.proto.component_name: c.proto for c in app.get("bidi_component")}
    stage, page = shown["continuous-batching-lab.stage"], shown["continuous-batching-lab.page"]
    assert (stage.js_source_path, stage.css_source_path, stage.js_content, stage.css_content) == (
        "stage.js",
        "stage.css",
        "",
        "",
    )
    assert (page.js_source_path, page.js_content) == ("page.js", "")


def test_the_declaration_is_the_projects_and_names_folders_of_the_package():
    """Streamlit takes the components' full names from the project's name, and serves their folders (each in the
    subpackage of cblab.ui that draws it: stage/, frame/)."""
    project = tomllib.loads((DECLARATION.parents[2] / "pyproject.toml").read_text())["project"]["name"]
    name, folders = declared()
    assert name == project and set(folders) == {"stage", "page", "overview"}
    assert all(folder.is_dir() and folder.parent.parent == DECLARATION.parent for folder in folders.values())
    assert {path.name for path in folders["stage"].glob("*.js")} == set(SCRIPTS)


def test_each_component_s_modules_import_only_each_other_and_the_inline_form_is_one_module():
    """Each file imports others of its folder by relative path; the inline form (should Streamlit refuse the
    declaration) is them all in order, with one export: the entry's default."""
    from cblab.ui.frame.page import PAGE
    from cblab.ui.stage.overview_chart import OVERVIEW

    for component in (STAGE, PAGE, OVERVIEW):
        for path in component.folder.glob("*.js"):
            for source in re.findall(r'^import (?:.* from )?"(.*)";', path.read_text(), re.M):
                assert source.startswith("./") and (component.folder / source).is_file(), (path, source)
        assert {path.name for path in component.folder.glob("*.js")} == set(component.scripts), component.key
        inline = component.inline_js()
        assert not re.search(r"^import ", inline, re.M)
        assert re.findall(r"^export .*", inline, re.M) == ["export default function (component) {"]
        assert component.scripts[-1] == component.js


def test_should_streamlit_refuse_the_declaration_the_files_go_inline(monkeypatch):
    from streamlit.components.v2.component_manager import BidiComponentManager

    def refuse(*args, **kwargs):
        raise TypeError("a changed API")

    monkeypatch.setattr(BidiComponentManager, "register_from_manifest", refuse)
    app = start_app(lesson="part1-basic-batch")
    assert not app.exception
    shown = {c.proto.component_name: c.proto for c in app.get("bidi_component")}
    stage = shown["continuous-batching-lab.stage"]
    assert stage.js_source_path == "" and stage.js_content == STAGE.inline_js()
    assert stage.css_content == (declared()[1]["stage"] / "stage.css").read_text(encoding="utf-8")
