"""The scenario fuzzer (`bash scripts/fuzz`, `validation/fuzz.py`) a few thousand cases at a
time: every input that once failed (its corpus) and freshly generated ones must be valid or get
one `ScenarioError` line that names a key. The full million runs from `scripts/fuzz`."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import buflab

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "validation"))
import fuzz  # noqa: E402

pytestmark = pytest.mark.engine


def test_the_corpus_and_generated_inputs_get_valid_or_one_line_naming_a_key() -> None:
    """3,000 generated cases (about half a second) on a seed of their own, and the corpus."""
    failures = fuzz.run(cases=3000, jobs=1, seed=20261124)
    assert not failures, failures[:3]


def test_the_checker_tells_a_good_answer_from_a_bad_one() -> None:
    """The fuzzer's own check must be able to fail: a traceback-raising input, a message of
    several lines and one that names no key are findings; a valid scenario and a one-line
    message that names its key are not."""
    assert (
        fuzz.check(
            {"network": {"bottleneck": {"rate": "10Mbps"}}, "traffic": [{"kind": "long_lived"}]}
        )
        is None
    )
    assert fuzz.check({"network": {"bottleneck": {"rate": "fast"}}, "traffic": []}) is None
    assert fuzz.KEY_FIRST.match('network.access."": unknown key')
    assert fuzz.KEY_FIRST.match('"rate ": unknown key')
    assert not fuzz.KEY_FIRST.match("unknown key; expected one of: name")
    assert not fuzz.KEY_FIRST.match("something went wrong")


def test_keys_that_are_empty_or_odd_are_quoted_and_deep_nesting_is_one_line() -> None:
    """Fuzzing findings: an empty key vanished from its message (`network.access.: unknown
    key`, or just `unknown key` at the top), and a table nested thousands deep overflowed
    Python's stack while being copied."""
    base = {"network": {"bottleneck": {"rate": "10Mbps"}}, "traffic": [{"kind": "long_lived"}]}
    with pytest.raises(buflab.ScenarioError, match=r'^network\.access\."": unknown key'):
        buflab.validate({**base, "network": {**base["network"], "access": {"": 1}}})
    with pytest.raises(buflab.ScenarioError, match=r'^"rate ": unknown key'):
        buflab.validate({**base, "rate ": 1})
    deep: object = 1
    for _ in range(5000):
        deep = {"a": deep}
    with pytest.raises(
        buflab.ScenarioError, match=r"^name\.a\.a\.a\.a\.a…: tables or arrays nested"
    ):
        buflab.validate({**base, "name": deep})
