"""docs/scenario.md is generated from the engine's schema and must stay in step with it."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

import buflab
from buflab.cli import cli
from buflab.cli.docs import key_tables, results_section
from buflab.engine import table_descriptions
from conftest import TINY_SCENARIO

DOC = Path(__file__).resolve().parent.parent / "docs" / "scenario.md"


def test_key_tables_are_markdown_per_section() -> None:
    schema = [
        {"section": "", "key": "seed", "type": "integer", "default": "1", "doc": "Seed."},
        {
            "section": "network.bottleneck",
            "key": "network.bottleneck.rate",
            "type": "rate",
            "default": "required",
            "doc": "Rate | with a pipe.",
        },
    ]
    text = key_tables(schema)
    assert "### top level" in text and "### network.bottleneck" in text
    assert "| `seed` | integer | `1` | Seed. |" in text
    assert "| `network.bottleneck.rate` | rate | required | Rate \\| with a pipe. |" in text


def test_results_are_a_markdown_table_per_described_table() -> None:
    column = {"name": "x", "dtype": "int64", "unit": "pkt", "doc": "A | count."}
    tables = {
        "summary": {"doc": "The run.", "columns": [column]},
        "transfers": {"doc": "A row per file.", "columns": [{**column, "unit": ""}]},
    }
    text = results_section(tables)
    assert "this object; `Result.summary` is the same dict. The run.\n" in text
    assert (
        "| key | type | unit | meaning |\n|---|---|---|---|\n| `x` | int64 | pkt | A \\| count. |"
        in text
    )
    # A table's doc, then what Python offers for it.
    assert "#### transfers\n\nA row per file. `buflab.analysis.transfers.by_size_bin()`" in text
    assert (
        "| column | type | unit | meaning |" in text and "| `x` | int64 |  | A \\| count. |" in text
    )
    assert "#### events" in text, "the event log's hand-written section"


@pytest.mark.engine
def test_committed_reference_is_current() -> None:
    generated = CliRunner().invoke(cli, ["docs"]).stdout
    assert DOC.exists() and DOC.read_text() == generated, (
        "docs/scenario.md is out of date: regenerate it with "
        "`.venv/bin/buflab docs > docs/scenario.md`"
    )


@pytest.mark.engine
def test_every_summary_key_is_documented() -> None:
    summary = buflab.run(TINY_SCENARIO).summary
    assert list(summary) == [
        column["name"] for column in table_descriptions()["summary"]["columns"]
    ]


def test_the_readmes_listing_of_the_example_is_the_file() -> None:
    """Newcomer issue, item 12: the README's listing of examples/dumbbell.toml had drifted
    from the file. Every ```toml block the README introduces with a link to a file is that
    file, character for character."""
    import re

    root = Path(__file__).resolve().parent.parent
    readme = (root / "README.md").read_text()
    listings = re.findall(r"\]\(([\w/.-]+\.toml)\):\n\n```toml\n(.*?)```", readme, re.S)
    assert listings, "the README lists the example"
    for path, text in listings:
        assert text == (root / path).read_text(), path


def test_the_catalogue_of_reproduced_results_is_in_step_with_the_recipes() -> None:
    """Newcomer issue, item 3: the README and every recipe pointed to a REPRODUCE.md that a
    clone does not have. docs/reproduce.md is made from the recipes and must be what
    `buflab docs --recipes` prints now, naming every recipe and its published numbers."""
    from buflab.experiments.recipes import names
    from buflab.experiments.recipes.catalogue import catalogue

    root = Path(__file__).resolve().parent.parent
    text = catalogue()
    assert (root / "docs" / "reproduce.md").read_text() == text, (
        "docs/reproduce.md is out of date: regenerate it with "
        "`.venv/bin/buflab docs --recipes > docs/reproduce.md`"
    )
    for name in names():
        assert f"## {name}: " in text and f"`buflab reproduce {name}`" in text
    assert "| thesis Fig 4.4 top |" in text, "t1's published numbers are listed"
    assert "REPRODUCE.md" not in (root / "README.md").read_text()
