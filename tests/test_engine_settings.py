"""The engine's settings table (engine/lab/engine_settings.py) reaches every front door: each
`EngineConfig` field is in it, and a scenario's `[engine]` table, the CLI, the sidebar, the URL
and `Overrides` each take every setting, within the same bounds."""

import dataclasses

import pytest

from cblab.cli.main import build_parser
from cblab.cli.options import scenario_of
from cblab.ui.controls.settings import BY_KEY, parse, url_text
from cblab.ui.runs.runs import Overrides
from engine import EngineConfig
from engine.lab.engine_settings import BY_NAME, ENGINE_SETTINGS
from engine.lab.scenario import ScenarioError, parse_scenario

REQUESTS = 'title = "t"\n[[requests]]\nprompt = [1]\nmax_tokens = 1\n'
IDS = [setting.name for setting in ENGINE_SETTINGS]


def a_value(setting):
    """A value other than the default, within the table's bounds: the highest int, the last choice, True,
    a fraction half way."""
    if setting.kind == "int":
        return setting.high
    if setting.kind == "fraction":
        return (setting.low + setting.high) / 2
    return True if setting.kind == "bool" else setting.choices[-1]


def with_needs(setting, value) -> dict:
    """The setting at `value`, with the other settings it needs (the table's `needs`)."""
    return {**dict(setting.needs), setting.name: value}


def toml(setting, value) -> str:
    by_section: dict[str, list[str]] = {}
    for name, given in with_needs(setting, value).items():
        section, _, key = BY_NAME[name].toml_path.rpartition(".")
        text = repr(given).lower() if isinstance(given, bool) else repr(given).replace("'", '"')
        by_section.setdefault(section, []).append(f"{key} = {text}")
    tables = [f"[engine{'.' + section if section else ''}]\n" + "\n".join(keys) for section, keys in by_section.items()]
    return REQUESTS + "\n".join(tables) + "\n"


def test_the_table_has_every_engine_config_field_in_order():
    assert [field.name for field in dataclasses.fields(EngineConfig)] == IDS


@pytest.mark.parametrize("setting", ENGINE_SETTINGS, ids=IDS)
def test_the_engine_accepts_each_setting_at_the_table_s_bounds(setting):
    """A scenario's, a link's and a flag's limits lie within the engine's own."""
    values = {
        "bool": lambda: [False, True],
        "choice": lambda: list(setting.choices),
        "int": lambda: [setting.low, setting.high],
        "fraction": lambda: [setting.low, setting.high - 1e-9],
    }
    for value in values[setting.kind]():
        fits = {"batch_size": 1} if setting.at_least else {}
        assert getattr(EngineConfig(**fits, **with_needs(setting, value)), setting.name) == value


@pytest.mark.parametrize("setting", ENGINE_SETTINGS, ids=IDS)
def test_a_scenario_reads_each_setting_and_refuses_one_past_its_limit(setting):
    value = a_value(setting)
    assert getattr(parse_scenario(toml(setting, value)).engine, setting.name) == value
    wrong = setting.high + 1 if setting.kind == "int" else "neither"
    with pytest.raises(ScenarioError, match=f"engine.{setting.toml_path}: must be"):
        parse_scenario(toml(setting, wrong))


def test_settings_a_scenario_leaves_out_are_the_defaults_or_none():
    engine = parse_scenario(REQUESTS).engine
    for setting in ENGINE_SETTINGS:
        assert getattr(engine, setting.name) == (None if setting.optional else setting.default), setting.name


def test_only_the_stop_token_has_no_cli_flag():
    assert [setting.name for setting in ENGINE_SETTINGS if setting.flag is None] == ["stop_token"]


@pytest.mark.parametrize(
    "setting", [s for s in ENGINE_SETTINGS if s.flag], ids=[s.name for s in ENGINE_SETTINGS if s.flag]
)
def test_the_cli_sets_each_flagged_setting_within_the_table_s_bounds(setting, capsys):
    parser = build_parser()
    value = a_value(setting)
    given = [] if setting.switch is not None else [str(value)]
    for name, needed in setting.needs:
        given += [BY_NAME[name].flag, str(needed)]
    args = parser.parse_args(["run", "part2-slot-refill", setting.flag, *given])
    assert getattr(scenario_of(args).engine, setting.name) == value
    if not setting.batching_mode:
        assert getattr(parser.parse_args(["compare", "part2-slot-refill", setting.flag, *given]), setting.name) == value
    if setting.kind == "int":
        for wrong in (setting.low - 1, setting.high + 1):
            with pytest.raises(SystemExit):
                parser.parse_args(["run", setting.flag, str(wrong)])
            assert f"must be an integer from {setting.low} to {setting.high:,}" in capsys.readouterr().err
    if setting.kind == "fraction":
        for wrong in (setting.low - 0.5, setting.high, "nan"):
            with pytest.raises(SystemExit):
                parser.parse_args(["run", setting.flag, str(wrong)])
            assert f"must be a number ≥ {setting.low:g} and below {setting.high:g}" in capsys.readouterr().err


@pytest.mark.parametrize("setting", ENGINE_SETTINGS, ids=IDS)
def test_the_sidebar_and_the_url_have_each_setting_within_the_table_s_bounds(setting):
    entry = BY_KEY[setting.name]
    assert entry.group == setting.group
    if setting.kind == "choice":
        assert entry.options == setting.choices
    if entry.widget in ("number", "optional_number"):
        assert entry.low == setting.low and entry.high <= setting.high
        assert parse(entry, url_text(entry, entry.high)) == entry.high
        with pytest.raises(ValueError):
            parse(entry, str(setting.high + 1))


def test_overrides_has_a_field_for_each_setting():
    fields = {field.name for field in dataclasses.fields(Overrides)}
    assert [name for name in IDS if name not in fields] == []
