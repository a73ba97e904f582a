"""The app's Streamlit components (the stage, the page component, a long run's overview) as package assets.

Streamlit's components v2 serve a packaged component's files from the folder its package declares
(`cblab/ui/pyproject.toml`: `[[tool.streamlit.component.components]]`, `asset_dir`), and a rerun then
names the files (`js_source_path` "stage.js") instead of carrying their text: the stage's JavaScript
and CSS were about 55 KB of every click's message when they were declared inline.

Streamlit finds the declaration itself when its server starts, among the installed packages: an
installed wheel carries it. It does not find a checkout's (an editable install or `PYTHONPATH`: its
scanner looks for the file in the distribution's file list, or beside an importable package named
after the distribution, `continuous_batching_lab`, which neither has), so `declare` registers the same
file with the running server at a session's first mount (once: later mounts find it registered). It
does so too when the folder Streamlit found
is another copy's (a wheel installed beside the checkout that is running), so the files served are
those of the code that runs. Should Streamlit's registry refuse (its inner API is not public), the
files are sent inline, as before, and the server's log says so once.

A component's JavaScript is ES modules that import each other by relative path (the browser
fetches them from the same folder); the inline form is the same files in order with those imports
and exports taken out, one module.
"""

from __future__ import annotations

import functools
import logging
import re
import threading
import tomllib
from pathlib import Path

import streamlit as st

DECLARATION = Path(__file__).resolve().with_name("pyproject.toml")
IMPORT = re.compile(r'^import (?:\{[^}]*\} from )?"\./[\w.-]+\.js";.*\n', re.M)  # one module importing another
EXPORT = re.compile(r"^export (?!default)", re.M)
LOG = logging.getLogger(__name__)
_LOCK = threading.RLock()


@functools.cache
def declared() -> tuple[str, dict[str, Path]]:
    """The project's name and each declared component's asset folder."""
    data = tomllib.loads(DECLARATION.read_text(encoding="utf-8"))
    entries = data["tool"]["streamlit"]["component"]["components"]
    return data["project"]["name"], {c["name"]: (DECLARATION.parent / c["asset_dir"]).resolve() for c in entries}


def _manager():
    """The running server's component registry, or None (no server: a bare script, a unit test)."""
    from streamlit.runtime import Runtime

    return Runtime.instance().bidi_component_registry if Runtime.exists() else None


def _declared_on(manager) -> bool:
    """Whether `manager` serves every declared component from this package's folders."""
    project, folders = declared()
    roots = (manager.get_component_asset_root(f"{project}.{name}") for name in folders)
    return all(root is not None and Path(root).resolve() == folder for root, folder in zip(roots, folders.values()))


def declare() -> bool:
    """Register `DECLARATION` with the running server unless it serves these folders already; whether it
    does now (False: no server, or Streamlit refused)."""
    manager = _manager()
    if manager is None:
        return False
    if _declared_on(manager):
        return True
    with _LOCK:
        if _declared_on(manager):
            return True
        try:
            from streamlit.components.v2.manifest_scanner import ComponentConfig, ComponentManifest

            data = tomllib.loads(DECLARATION.read_text(encoding="utf-8"))
            configs = [ComponentConfig.from_dict(c) for c in data["tool"]["streamlit"]["component"]["components"]]
            manifest = ComponentManifest(name=data["project"]["name"], version="", components=configs)
            manager.register_from_manifest(manifest, DECLARATION.parent)
        except Exception as exc:  # Streamlit's registry changed: the components go inline
            LOG.warning("the components' files could not be declared to Streamlit (%r); they are sent inline", exc)
            return False
        return _declared_on(manager)


class PackagedComponent:
    """A declared component `name`, mounted like `st.components.v2.component`'s callable. `js` and `css` name
    files in its asset folder; `scripts` are its JavaScript modules in order for the inline form (`js` last)."""

    def __init__(self, name: str, js: str, css: str | None = None, scripts: tuple[str, ...] = ()):
        project, folders = declared()
        self.key, self.folder = f"{project}.{name}", folders[name]
        self.js, self.css, self.scripts = js, css, scripts or (js,)
        self._mounts: dict[bool, object] = {}  # files served -> Streamlit's mount callable

    def __call__(self, **kwargs):
        return self._mount(declare())(**kwargs)

    def _mount(self, served: bool):
        with _LOCK:
            if served not in self._mounts:
                if served:
                    self._mounts[served] = st.components.v2.component(self.key, js=self.js, css=self.css)
                else:
                    self._mounts[served] = st.components.v2.component(
                        self.key, js=self.inline_js(), css=self.css and (self.folder / self.css).read_text("utf-8")
                    )
            return self._mounts[served]

    def inline_js(self) -> str:
        """The modules as one: the files in order, without their imports of each other and their exports."""
        text = "\n".join((self.folder / name).read_text(encoding="utf-8") for name in self.scripts)
        return EXPORT.sub("", IMPORT.sub("", text))
