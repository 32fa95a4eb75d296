"""`buflab report`: every published result in one document.

Fast: the verdict rules on hand-made numbers (each boundary of agrees / near / disagrees),
the row list (every id of the list, each recipe's claimed rows among them), the recipes'
`[scale]` tables (each loads and keeps a subset of its points; bad tables are one line), bad
command-line input (one line each), and a report of one cheap recipe: written, self-contained
(no script, nothing fetched), and made again without simulating anything. Slow: every recipe
at `--scale ci`, and that report in headless chromium with every row of the list on the page.
"""

from __future__ import annotations

import math
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from buflab.cli import cli
from buflab.engine import ScenarioError
from buflab.engine.scenario import load_scenario
from buflab.experiments import recipes
from buflab.experiments.recipes import Published, split_header
from buflab.experiments.report import Comparison
from buflab.experiments.reproduction.collect import work_of_report
from buflab.experiments.reproduction.rows import claimed_rows, load_rows, unclaimed_recipes
from buflab.experiments.reproduction.verdict import (
    AGREES,
    DISAGREES,
    NEAR,
    NOT_YET,
    judge,
    worst,
)
from conftest import TINY_SCENARIO

# The ids of the list of reproduction targets, in its order.
LIST_IDS = (
    [f"F{i}" for i in range(1, 9)]
    + [f"S{i}" for i in range(1, 11)]
    + [f"T{i}" for i in range(1, 13)]
    + [f"P{i}" for i in range(1, 6)]
)


def number(
    mean: float, ci: float = math.nan, value: float = 0.5, band: float = 0.05, relation: str = "≈"
) -> Comparison:
    return Comparison(Published({}, "utilization", value, band, "", None, relation), mean, ci)


@pytest.mark.parametrize(
    ("mean", "ci", "expected"),
    [
        (0.54, math.nan, AGREES),  # within the band
        (0.55, math.nan, AGREES),  # on its edge
        (0.58, math.nan, NEAR),  # outside, within twice the band
        (0.40, math.nan, NEAR),  # twice the band below, exactly
        (0.62, math.nan, DISAGREES),  # beyond twice the band
        (0.62, 0.08, NEAR),  # beyond twice, but the interval reaches into the band
        (0.62, 0.06, DISAGREES),  # the interval stops short of it
        (math.nan, math.nan, NOT_YET),  # the point did not run
    ],
)
def test_a_banded_number_agrees_within_its_band_and_is_near_within_twice_it(
    mean: float, ci: float, expected: str
) -> None:
    assert judge(number(mean, ci)) == expected


@pytest.mark.parametrize(
    ("relation", "mean", "ci", "expected"),
    [
        (">", 0.02, math.nan, AGREES),  # one seed: the mean on the claimed side
        (">", 0.02, 0.01, AGREES),  # the whole interval on it
        (">", 0.02, 0.03, NEAR),  # the interval straddles the value
        (">", -0.02, 0.03, NEAR),  # the mean on the wrong side, within noise
        (">", -0.02, 0.01, DISAGREES),  # the whole interval on the wrong side
        ("<", -0.02, math.nan, AGREES),
        ("<", 0.02, math.nan, DISAGREES),
        ("<", 0.0, math.nan, NEAR),  # a tie neither confirms nor refutes "fewer"
    ],
)
def test_a_claim_without_a_number_needs_its_whole_interval_on_its_side(
    relation: str, mean: float, ci: float, expected: str
) -> None:
    assert judge(number(mean, ci, value=0.0, relation=relation)) == expected


def test_a_rows_verdict_is_its_worst_judged_number() -> None:
    assert worst([AGREES, NEAR, AGREES]) == NEAR
    assert worst([AGREES, DISAGREES, NEAR]) == DISAGREES
    assert worst([NOT_YET, AGREES]) == AGREES  # a point not run does not spoil the others
    assert worst([NOT_YET]) == NOT_YET
    assert worst([]) == NOT_YET


def test_the_row_list_is_the_list_of_reproduction_targets_and_recipes_claim_its_rows() -> None:
    """Every id of the list once, in order; every recipe that names a reproduction target
    names one of the list (a typo would leave its row "not yet" and the recipe beyond it)."""
    rows = load_rows()
    assert [row.id for row in rows] == LIST_IDS
    ids = set(LIST_IDS)
    for name in recipes.names():
        assert set(claimed_rows(name)) <= ids, (name, claimed_rows(name))
    assert {row.id for row in rows if "t1" in row.recipes} == {"T1", "T3"}
    # A row without a recipe or a live check says what is missing.
    for row in rows:
        assert row.recipes or row.check or row.open, row.id
    # Recipes beyond the list are the ones that claim no row.
    assert "aqm" in unclaimed_recipes(rows) and "t1" not in unclaimed_recipes(rows)


@pytest.mark.engine
@pytest.mark.parametrize("row", [r for r in load_rows() if r.command], ids=lambda r: r.id)
def test_a_formula_rows_command_runs_and_prints_its_number(row) -> None:  # noqa: ANN001
    """The command a formula row names for the terminal exists and shows the value the
    report judges (F1's 125,000 packets, F2's 4,419, F3's 37.7, F4's 1.15 %)."""
    from buflab.experiments.reproduction.formulas import CHECKS

    words = row.command.split()
    assert words[0] == "buflab"
    result = invoke(*words[1:])
    assert result.exit_code == 0, result.output
    if words[1] == "theory":
        measured = CHECKS[row.check]()[0].measured
        shown = f"{100 * measured:.3g} %" if measured < 1 else f"{measured:,.1f} pkt"
        assert shown in result.output, (shown, result.output)


def test_a_recipe_of_two_rows_gives_each_the_numbers_its_source_names() -> None:
    """t1 reproduces T1 and T3: a number whose source names T3 ("thesis Fig 4.5 top (T3)")
    is T3's, the others the first row's (T1), and T10 is not T1."""
    from buflab.experiments.reproduction.collect import RecipeOutcome

    t1 = RecipeOutcome("t1", "", "ci", "buflab reproduce t1 --scale ci", "")

    def row(source: str) -> str:
        published = Published({}, "drop_rate", 0.0, 0.0, source)
        return t1.row_of(Comparison(published, 0.0, math.nan), ["T1", "T3"])

    assert row("thesis Fig 4.5 top (T3)") == "T3"
    assert row("thesis Fig 4.4 top") == "T1"
    assert row("IMC Fig 11a (T10)") == "T1"


@pytest.mark.parametrize("scale", ["ci", "small"])
def test_every_recipe_has_its_scale_and_keeps_a_subset_of_its_points(scale: str) -> None:
    for name in recipes.names():
        _, full = recipes.load(name)
        _, scaled = recipes.load(name, scale=scale)
        full_points = {run.id for run in full.plan(*recipes.load(name)[:1], [], None).runs}
        scaled_base, _ = recipes.load(name, scale=scale)
        scaled_points = {run.id for run in scaled.plan(scaled_base, [], 1).runs}
        assert scaled_points <= full_points or not scaled.scale.varies, name
        assert scaled.published == full.published, name


@pytest.mark.parametrize(
    ("table", "fragments"),
    [
        ("[scale.huge]\nruns = 1\n", ("scale.huge", "ci or small")),
        ("[scale.ci]\nseeds = 1\n", ("scale.ci.seeds", "unknown key")),
        ("[scale.ci]\nruns = 0\n", ("scale.ci.runs", "at least 1")),
        ('[scale.ci]\nvary = { "network.bottleneck.buffer" = ["7pkt"] }\n', ("7pkt", "subset")),
        ('[scale.ci]\nvary = { "seed" = [1] }\n', ("scale.ci.vary.seed", "not varied")),
    ],
)
def test_a_bad_scale_table_is_one_line_naming_it(table: str, fragments: tuple[str, ...]) -> None:
    text = (
        TINY_SCENARIO + '\n[sweep.vary]\n"network.bottleneck.buffer" = ["10pkt", "20pkt"]\n' + table
    )
    with pytest.raises(ScenarioError) as error:
        split_header(load_scenario(text), "ci")
    message = str(error.value)
    assert "\n" not in message
    for fragment in fragments:
        assert fragment in message, (fragment, message)


def invoke(*args: str | Path):
    return CliRunner().invoke(cli, [str(a) for a in args])


def one_line_error(result, *fragments: str) -> None:
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])


@pytest.mark.engine
def test_bad_input_is_one_line(tmp_path: Path) -> None:
    one_line_error(invoke("report", "--only", "S99", "--out", tmp_path / "r"), "--only S99")
    one_line_error(invoke("report", "--scale", "huge"), "huge", "ci", "small", "full")
    afile = tmp_path / "a-file"
    afile.write_text("")
    one_line_error(invoke("report", "--out", afile), str(afile), "expected a directory")
    one_line_error(invoke("report", "--runs-in", afile), "--runs-in", "expected a directory")
    one_line_error(invoke("report", "--cluster", "nowhere"), "--cluster 'nowhere'", "local, slurm")
    one_line_error(invoke("reproduce", "p5", "--scale", "tiny"), "tiny")


@pytest.mark.engine
def test_a_report_is_self_contained_and_made_again_without_simulating(tmp_path: Path) -> None:
    """P5 (the pacer's gaps: seconds) and F1 (a formula): the documents are written, every
    figure is inside the HTML, nothing in it is fetched (no script, no stylesheet or image
    from elsewhere, no http(s) address), and a second report reuses every run."""
    args = ["report", "--scale", "ci", "--only", "F1,P5", "--out", tmp_path / "rep"]
    args += ["--runs-in", tmp_path / "runs", "-j", "1"]
    first = invoke(*args)
    assert first.exit_code == 0, first.output
    # Announced before anything runs: what it will simulate, and about how long it takes.
    assert "10 runs in 1 recipe; 10 to simulate, about" in first.stderr
    assert "10 runs simulated" in first.output
    html = (tmp_path / "rep" / "report.html").read_text()
    markdown = (tmp_path / "rep" / "report.md").read_text()
    for row in ("F1", "P5"):
        assert f'id="row-{row}"' in html and f"### {row}" in markdown
    assert "<script" not in html
    assert not re.search(r"https?://", html)
    sources = re.findall(r'(?:src|href)="([^"#][^"]*)"', html)
    assert sources and all(s.startswith("data:image/png;base64,") for s in sources), sources
    assert (tmp_path / "rep" / "figures" / "p5.png").exists()
    assert "figures/p5.png" in markdown
    assert "buflab reproduce p5" in html  # the exact command

    second = invoke(*args)
    assert second.exit_code == 0, second.output
    assert "0 runs simulated" in second.output
    assert "10 reused" in second.stderr
    assert "10 runs in 1 recipe, all finished before: nothing to simulate" in second.stderr
    # At another scale, the recipe's runs at this one are what its estimate learns from.
    other = work_of_report("small", tmp_path / "runs", ["P5"])
    assert other.measured == ["p5"] and other.finished == 0 and other.planned > 0


@pytest.mark.engine
def test_ctrl_c_still_writes_the_report_of_what_finished(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A sweep interrupted by Ctrl-C (its finished runs kept, as the sweep does): the report
    is written with the rows before it and the interrupted recipe as "did not run", the line
    saying what was kept, and exit status 130 as any interrupted sweep."""
    from buflab.experiments.reproduction import collect
    from buflab.experiments.sweep import SweepInterrupted

    def interrupted(name: str, out: Path, *args: object, **kwargs: object) -> None:
        raise SweepInterrupted(2, 10, out)

    monkeypatch.setattr(collect, "reproduce", interrupted)
    args = ["report", "--scale", "ci", "--only", "F1,P5", "--out", tmp_path / "rep"]
    result = invoke(*args, "--runs-in", tmp_path / "runs")
    assert result.exit_code == 130, result.output
    assert "interrupted: 2 of 10 runs kept" in result.stderr
    html = (tmp_path / "rep" / "report.html").read_text()
    assert 'id="row-F1"' in html and 'id="row-P5"' in html
    assert "Interrupted" in html and "did not run" in html


# The whole list at ci scale: shared by the two slow tests below.
@pytest.fixture(scope="module")
def ci_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("report-ci")
    result = invoke("report", "--scale", "ci", "--out", out / "rep", "--runs-in", out / "runs")
    assert result.exit_code == 0, result.output
    return out / "rep"


@pytest.mark.slow
@pytest.mark.engine
def test_every_row_appears_in_the_ci_report(ci_report: Path) -> None:
    """Every id of the list has its section and its line in the summary, in both documents,
    whether it has a verdict or is "not yet"; and every shipped recipe is shown."""
    html = (ci_report / "report.html").read_text()
    markdown = (ci_report / "report.md").read_text()
    for row in LIST_IDS:
        assert f'<section id="row-{row}">' in html, row
        assert f'href="#row-{row}"' in html, row
        assert f"### {row}\n" in markdown, row
    for name in recipes.names():
        assert f'id="recipe-{name}"' in html, name


CHROMIUM = "/usr/bin/chromium"


@pytest.mark.slow
@pytest.mark.engine
def test_the_ci_report_opens_in_a_browser_with_every_row(ci_report: Path, tmp_path: Path) -> None:
    """Headless chromium with no network opens the file: every row's section is on the page,
    and every figure has loaded (an image that failed would have no natural width)."""
    if not Path(CHROMIUM).exists() or shutil.which("chromium") is None:
        pytest.skip("Debian's chromium is not installed (bash scripts/setup --dev, as root)")
    sync_api = pytest.importorskip("playwright.sync_api")
    from test_serve_browser import artifacts, launch_chromium

    with sync_api.sync_playwright() as p:
        # Offline: a page that fetched anything would fail to show it.
        viewport = {"width": 1400, "height": 1000}
        browser = launch_chromium(p, tmp_path / "profile", viewport, offline=True)
        try:
            page = browser.new_page()
            page.goto((ci_report / "report.html").as_uri())
            shown = page.eval_on_selector_all("section", "els => els.map(e => e.id)")
            for row in LIST_IDS:
                assert f"row-{row}" in shown, row
            broken = page.eval_on_selector_all(
                "img", "els => els.filter(e => !e.complete || e.naturalWidth === 0).length"
            )
            assert broken == 0
            assert page.locator("img").count() >= len(recipes.names())
            page.screenshot(path=str(artifacts() / "report_ci.png"), full_page=False)
        finally:
            browser.close()
