"""Loading scenarios and KEY=VALUE overrides (pure Python: no engine needed)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import buflab
from buflab.engine import ScenarioError
from buflab.engine.scenario import apply_overrides, load_scenario, parse_override, parse_value
from conftest import TINY_SCENARIO

BASE = {
    "seed": 1,
    "network": {"bottleneck": {"rate": "10Mbps", "buffer": "20pkt"}, "rtt": "20ms..40ms"},
    "traffic": [{"kind": "long_lived", "flows": 4}],
}


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("400", 400),
        ("0.5", 0.5),
        ("true", True),
        ('"x"', "x"),
        ("50pkt", "50pkt"),  # not TOML: kept as the string
        ("10Gbps", "10Gbps"),
        ("75ms..125ms", "75ms..125ms"),
        ("[1, 2]", [1, 2]),
        ('{ rate = "1Gbps" }', {"rate": "1Gbps"}),
        ("2024-01-01", "2024-01-01"),  # a TOML date, but no key takes dates: kept as text
    ],
)
def test_values_are_toml_when_they_parse_else_strings(text: str, value: object) -> None:
    assert parse_value(text) == value


def test_override_splits_on_the_first_equals_sign() -> None:
    assert parse_override("name=a=b") == ("name", "a=b")
    assert parse_override(" seed = 2 ") == ("seed", 2)


@pytest.mark.parametrize("text", ["seed", "=2", ""])
def test_override_without_key_or_equals_is_an_error(text: str) -> None:
    with pytest.raises(ScenarioError, match="expected KEY=VALUE"):
        parse_override(text)


def test_dotted_keys_and_array_indexes() -> None:
    result = apply_overrides(
        BASE, ["network.bottleneck.buffer=50pkt", "traffic.0.flows=10", "seed=2"]
    )
    assert result["network"]["bottleneck"]["buffer"] == "50pkt"
    assert result["traffic"][0]["flows"] == 10
    assert result["seed"] == 2
    assert BASE["traffic"][0]["flows"] == 4, "the input must not be modified"


def test_overrides_copy_only_the_tables_on_their_path() -> None:
    """Hardening defect 11: a file of 100,000 traffic entries took 37 s in the front end,
    most of it deep copies of the tree, one per override step. An override now copies the
    tables and arrays on its own path and shares the rest; neither tree changes the other."""
    base = {"network": {"bottleneck": {"buffer": "10pkt"}}, "traffic": [{"flows": 1}, {}]}
    result = apply_overrides(base, {"traffic.0.flows": 9, "network.loss": 0.1})
    assert result["traffic"][0]["flows"] == 9 and result["network"]["loss"] == 0.1
    assert base == {"network": {"bottleneck": {"buffer": "10pkt"}}, "traffic": [{"flows": 1}, {}]}
    assert result["traffic"][1] is base["traffic"][1], "an entry no override names is shared"
    assert result["network"]["bottleneck"] is base["network"]["bottleneck"]
    assert result["network"] is not base["network"] and result["traffic"] is not base["traffic"]
    # Two overrides along one path copy it once: the second sees the first.
    twice = apply_overrides(base, {"traffic.0.flows": 2, "traffic.0.cc": "cubic"})
    assert twice["traffic"][0] == {"flows": 2, "cc": "cubic"} and base["traffic"][0] == {"flows": 1}


def test_a_run_reads_and_validates_its_scenario_once(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Hardening defect 11: `buflab run` validated a scenario three times (for its estimate,
    its warm-up note and the run), each a second on a file of 100,000 traffic entries."""
    from click.testing import CliRunner

    import buflab.engine
    from buflab.cli import cli

    engine = buflab.engine.core()
    calls: list[str] = []

    class Counting:
        """The engine, counting the calls that read a whole scenario."""

        def __getattr__(self, name: str) -> object:
            if name in ("validate", "link_facts", "traffic_facts"):
                calls.append(name)
            return getattr(engine, name)

    monkeypatch.setattr(buflab.engine, "_core", Counting())
    path = tmp_path / "tiny.toml"
    path.write_text(TINY_SCENARIO)
    ran = CliRunner().invoke(cli, ["run", str(path), "--json"])
    assert ran.exit_code == 0, ran.output
    assert calls == ["validate"], calls


def test_new_keys_and_tables_are_created() -> None:
    # The engine, not the override parser, decides whether a key exists.
    result = apply_overrides(BASE, ["monitor.events=true", "network.access.rate=1Gbps"])
    assert result["monitor"] == {"events": True}
    assert result["network"]["access"] == {"rate": "1Gbps"}


def test_mapping_overrides_take_python_values_as_they_are() -> None:
    result = apply_overrides(BASE, {"network.bottleneck.buffer": "400", "traffic.0.flows": 7})
    assert result["network"]["bottleneck"]["buffer"] == "400"  # not parsed to an int
    assert result["traffic"][0]["flows"] == 7


def test_a_none_override_removes_the_key() -> None:
    # TOML has no null: None in a Python mapping can only mean "not given".
    result = apply_overrides(BASE, {"network.bottleneck.buffer": None, "not.there": None})
    assert "buffer" not in result["network"]["bottleneck"]
    assert "not" not in result  # no empty table made on the way
    with pytest.raises(ScenarioError, match="'traffic.0': None removes a key, but"):
        apply_overrides(BASE, {"traffic.0": None})


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("traffic.3.flows=2", "index 3 is out of range, traffic has 1 entry"),
        ("traffic.flows=2", "traffic is an array, so the next segment must be an index"),
        ("network.rtt.low=1ms", "network.rtt is the string '20ms..40ms', not a table"),
        ("seed.value=3", "seed is the integer 1, not a table"),
        ("network..rate=1Gbps", "empty segment"),
    ],
)
def test_bad_paths_are_one_line_errors_naming_the_key(override: str, message: str) -> None:
    key = override.partition("=")[0]
    with pytest.raises(ScenarioError) as error:
        apply_overrides(BASE, [override])
    text = str(error.value)
    assert message in text
    assert repr(key) in text
    assert "\n" not in text


def test_load_from_path_text_and_dict(tmp_path: Path) -> None:
    text = 'name = "x"\nseed = 3\n'
    path = tmp_path / "s.toml"
    path.write_text(text)
    assert load_scenario(path) == load_scenario(str(path)) == load_scenario(text)
    assert load_scenario({"name": "x", "seed": 3}, ["seed=4"]) == {"name": "x", "seed": 4}


def test_missing_file_raises_file_not_found(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        load_scenario(tmp_path / "absent.toml")


@pytest.mark.engine
def test_empirical_file_sizes_from_a_csv_next_to_the_scenario(tmp_path: Path) -> None:
    # The front end reads `file` (relative to the scenario file) into `cdf`; the engine then
    # samples it: here every file is between 1 KB and 2 KB, half of them exactly 1 KB.
    (tmp_path / "sizes.csv").write_text("value,probability\n1KB,0.5\n2000,1.0\n")
    (tmp_path / "s.toml").write_text(
        'duration = "20s"\n'
        '[network]\nbottleneck = { rate = "100Mbps", buffer = "100pkt" }\n'
        '[[traffic]]\nkind = "closed_loop"\nusers = 5\n'
        'file_size = { dist = "empirical", file = "sizes.csv" }\n'
    )
    sizes = buflab.run(tmp_path / "s.toml").transfers["bytes"]
    assert len(sizes) > 50
    assert sizes.between(1000, 2000).all()
    assert 0.35 < (sizes == 1000).mean() < 0.65  # 50 % with ~100 draws: ±3σ


def test_missing_cdf_file_names_the_key(tmp_path: Path) -> None:
    (tmp_path / "s.toml").write_text(
        '[[traffic]]\nkind = "closed_loop"\nfile_size = { dist = "empirical", file = "nope.csv" }\n'
    )
    with pytest.raises(ScenarioError, match=r"traffic\.0\.file_size\.file: cannot read"):
        load_scenario(tmp_path / "s.toml")


def test_a_cdf_file_that_never_ends_is_refused(tmp_path: Path) -> None:
    """Hardening issue, defect 4: an empirical CDF `file = "/dev/zero"` was read without end."""
    (tmp_path / "s.toml").write_text(
        '[[traffic]]\nkind = "closed_loop"\n'
        'file_size = { dist = "empirical", file = "/dev/zero" }\n'
    )
    with pytest.raises(ScenarioError, match="not a regular file"):
        load_scenario(tmp_path / "s.toml")


@pytest.mark.engine
@pytest.mark.parametrize(
    ("scenario", "message"),
    [
        (
            {"network": {"botleneck": {"rate": "10Mbps"}}, "traffic": [{"kind": "long_lived"}]},
            "network.botleneck: unknown key; did you mean `bottleneck`?",
        ),
        (
            {"network": {"bottleneck": {"rate": "10Mbps"}}, "trafic": [{"kind": "long_lived"}]},
            "trafic: unknown key; did you mean `traffic`?",
        ),
        (
            {
                "network": {"bottleneck": {"rate": "10Mbps"}},
                "traffic": [{"kind": "udp_cbr", "rat": "1Mbps"}],
            },
            "traffic.0.rat: unknown key; did you mean `rate`?",
        ),
    ],
)
def test_a_misspelt_key_is_named_before_the_key_it_leaves_missing(
    scenario: dict[str, object], message: str
) -> None:
    """Hardening issue, defect 1: `botleneck` once read as `network.bottleneck: missing`, which
    never names what the user wrote. Unknown keys come first, with the suggestion."""
    with pytest.raises(ScenarioError) as error:
        buflab.validate(scenario)
    assert str(error.value) == message


def test_a_megabyte_value_is_echoed_by_its_start() -> None:
    """Hardening issue, defect 10: a value was echoed in full, making error lines of 1–2 MB.
    The engine cuts a shown value to its first 60 characters and says how long it was."""
    huge = "1" * 1_000_000 + "pkt"
    with pytest.raises(ScenarioError) as error:
        buflab.validate(
            {"duration": "1s", "network": {"bottleneck": {"rate": "10Mbps", "buffer": huge}}}
        )
    message = str(error.value)
    assert message.startswith('network.bottleneck.buffer: got "111'), message
    assert "… (1000005 characters)" in message, message
    # The start, the length and what was expected: a line, not a megabyte.
    assert len(message) < 300, len(message)


@pytest.mark.parametrize("source", [3, 2.5, None, b"duration = 1", ["a"]])
def test_a_source_that_is_no_scenario_is_refused(source: object) -> None:
    """Hardening issue, defect 9: `validate(3)` once read and closed file descriptor 3."""
    with pytest.raises(ScenarioError, match="expected a path, TOML text or a dict"):
        load_scenario(source)  # type: ignore[arg-type]


def test_flows_beyond_the_machines_memory_are_refused_up_front() -> None:
    """Hardening issue, defect 4: `traffic.0.flows = 10000000` (the documented maximum) died by
    SIGABRT mid-run. Measured: about 1.8 KB a flow in the engine; 3 KB a flow is counted."""
    from buflab.engine.memory import BYTES_PER_FLOW, check_memory

    normalized = {
        "traffic": [{"kind": "long_lived", "flows": 10}, {"kind": "udp_cbr", "flows": 1000}]
    }
    check_memory(normalized, available=1010 * BYTES_PER_FLOW)  # just fits
    with pytest.raises(ScenarioError, match=r"traffic\.1\.flows: got 1,000; expected fewer: 1,010"):
        check_memory(normalized, available=1000 * BYTES_PER_FLOW)


def test_the_memory_a_run_may_count_on_can_be_set(monkeypatch: pytest.MonkeyPatch) -> None:
    """The refusal says how to override it: BUFLAB_MEMORY, a size, is the memory a run may
    count on instead of what the machine has available; a size it cannot read is one line."""
    from buflab.engine.memory import BYTES_PER_FLOW, check_memory

    normalized = {"traffic": [{"kind": "long_lived", "flows": 1000}]}
    monkeypatch.setenv("BUFLAB_MEMORY", str(999 * BYTES_PER_FLOW))
    with pytest.raises(ScenarioError, match="set BUFLAB_MEMORY, e.g. BUFLAB_MEMORY=64GiB"):
        check_memory(normalized)
    monkeypatch.setenv("BUFLAB_MEMORY", "64GiB")
    check_memory(normalized)
    monkeypatch.setenv("BUFLAB_MEMORY", "plenty")
    with pytest.raises(ScenarioError, match="BUFLAB_MEMORY: got 'plenty'; expected a size"):
        check_memory(normalized)


@pytest.mark.engine
def test_numpy_numbers_are_numbers_and_other_python_objects_are_refused() -> None:
    """Hardening issue, defect 9: `flows = np.int64(2)` was refused; bytes and sets silently
    became strings (now refused, naming the key); a circular dict was reported as "inf or
    nan"."""
    import numpy as np

    base = {
        "duration": "1s",
        "warmup": "0.5s",
        "network": {"bottleneck": {"rate": "10Mbps"}},
        "traffic": [{"kind": "long_lived", "flows": np.int64(2)}],
    }
    assert buflab.validate(base)["traffic"][0]["flows"] == 2
    for odd, name in (({1, 2}, "set"), (b"2", "bytes")):
        base["traffic"][0]["flows"] = odd
        with pytest.raises(
            ScenarioError, match=rf"traffic\.0\.flows: got {name} .*expected strings"
        ):
            buflab.validate(base)
    circular: dict[str, object] = {}
    circular["network"] = circular
    with pytest.raises(ScenarioError, match="a table contains itself"):
        buflab.validate(circular)


def test_one_exception_hierarchy_covers_every_error_buflab_raises(tmp_path: Path) -> None:
    """Hardening issue, defect 9: the engine's own ScenarioError, raw OS errors for a missing
    file or an unwritable directory, and TypeError / AttributeError for overrides of the
    wrong type. Now each is a `buflab.Error` with one line naming what is wrong, and keeps the
    built-in class older code caught (ValueError, FileNotFoundError, OSError)."""
    with pytest.raises(buflab.ScenarioError) as engine:
        buflab.validate({"duration": "1s", "traffic": []})
    assert isinstance(engine.value, buflab.Error) and isinstance(engine.value, ValueError)
    missing = tmp_path / "nothing.toml"
    with pytest.raises(buflab.MissingFile, match=f"{missing}: no such file") as error:
        buflab.run(missing)
    assert isinstance(error.value, FileNotFoundError) and isinstance(error.value, buflab.Error)
    for wrong in (5, [5], {5: 1}):
        with pytest.raises(buflab.ScenarioError, match="overrides: got"):
            load_scenario(TINY_SCENARIO, wrong)  # type: ignore[arg-type]
    result = buflab.run(TINY_SCENARIO)
    blocked = tmp_path / "file"
    blocked.write_text("not a directory")
    with pytest.raises(buflab.OutputError, match=f"{blocked}: cannot write the results there"):
        result.to_dir(blocked)
    with pytest.raises(buflab.UnitError):
        from buflab.engine.units import parse_rate

        parse_rate("fast")


@pytest.mark.engine
def test_the_engines_toml_reader_reads_what_pythons_does() -> None:
    """Hardening issue, defect 11: Python's TOML reader took most of the front end's 37 s on a
    file of 100,000 traffic entries, so scenario files are read by the engine's (Rust's).
    Both must give the same tree, key order included, for every shipped example and recipe
    file; values TOML has and JSON has not become text the engine then refuses by key."""
    import tomllib

    from buflab.engine.scenario import _parse_toml

    root = Path(__file__).resolve().parent.parent
    files = [
        *root.glob("examples/*.toml"),
        *root.glob("python/buflab/experiments/recipes/**/*.toml"),
    ]
    assert len(files) > 10
    for path in files:
        text = path.read_text()
        ours, python = _parse_toml(text, str(path)), tomllib.loads(text)
        assert json.dumps(ours) == json.dumps(python, default=str), path
    odd = _parse_toml("a = nan\nb = inf\nc = 1979-05-27T07:32:00Z\n[t]\nz = 1\ny = 2", "text")
    assert odd == {"a": "nan", "b": "inf", "c": "1979-05-27T07:32:00Z", "t": {"z": 1, "y": 2}}
    assert list(odd["t"]) == ["z", "y"], "tables keep the file's order"


@pytest.mark.engine
def test_a_validated_scenario_validates_again_to_itself() -> None:
    """The front end reads facts from the validated tree (the run's time and memory
    estimates), so what `validate` returns must be a scenario the engine reads back
    unchanged. A bump's default rate was echoed as "unbounded", which the reader refused:
    `buflab run examples/qcn.toml` failed. Checked for every example and recipe."""
    from buflab.experiments.recipes import load, names

    root = Path(__file__).resolve().parent.parent
    trees = [load_scenario(path) for path in sorted((root / "examples").glob("*.toml"))]
    trees += [load(name)[0] for name in names()]
    for tree in trees:
        normalized = buflab.validate(tree)
        assert buflab.validate(normalized) == normalized, tree.get("name")
