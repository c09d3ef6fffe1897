"""A rubric version a run cannot use is refused where it is made (import, edit): max_tokens
out of range or not a whole number, settings that are no mapping, blank instructions."""

from __future__ import annotations

import pytest
import yaml

from annotate.judge.rubrics.versions import RubricError, edit_rubric, list_rubrics
from annotate.store import open_store


@pytest.fixture
def cli(cli, db_path):
    """The `annotate` command on a new store (version 1 only)."""
    open_store(db_path).close()
    return cli


def exported(cli, tmp_path, **changes) -> str:
    out = tmp_path / "v1.yaml"
    assert cli("rubric", "export", "1", "--out", str(out)).code == 0
    document = yaml.safe_load(out.read_text())
    document["rubric"].update(changes)
    edited = tmp_path / "edited.yaml"
    edited.write_text(yaml.safe_dump(document))
    return str(edited)


@pytest.mark.parametrize("max_tokens", [-5, 0, 64_001, 2.5, "1024", True])
def test_import_refuses_a_max_tokens_a_run_cannot_send(cli, tmp_path, max_tokens):
    path = exported(cli, tmp_path, settings={"max_tokens": max_tokens})
    result = cli("rubric", "import", path)
    assert result.code == 2
    assert "settings.max_tokens must be a whole number from 1 to 64,000" in result.err
    assert f"got {max_tokens!r}" in result.err
    assert [r["version"] for r in cli("rubric", "list", "--json").json()["rubrics"]] == [1]


def test_import_takes_a_max_tokens_in_range(cli, tmp_path):
    path = exported(cli, tmp_path, settings={"max_tokens": 2048})
    assert cli("rubric", "import", path, "--json").json()["version"] == 2


@pytest.mark.parametrize("instructions", ["", "   ", "\n\t \n"])
def test_import_refuses_blank_instructions(cli, tmp_path, instructions):
    result = cli("rubric", "import", exported(cli, tmp_path, instructions=instructions))
    assert result.code == 2 and "instructions are empty" in result.err


def test_edit_refuses_blank_instructions_and_bad_settings_and_stores_nothing(fresh_store):
    with pytest.raises(RubricError, match="instructions are empty"):
        edit_rubric(fresh_store, 1, {"instructions": "  \n"}, "lena")
    with pytest.raises(RubricError, match=r"settings\.max_tokens .* got -5"):
        edit_rubric(fresh_store, 1, {"settings": {"max_tokens": -5}}, "lena")
    with pytest.raises(RubricError, match="settings must be a mapping"):
        edit_rubric(fresh_store, 1, {"settings": [["max_tokens", 5]]}, "lena")
    assert [r.version for r in list_rubrics(fresh_store)] == [1]
