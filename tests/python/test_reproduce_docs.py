"""scripts/reproduce_docs.py: docs/reproduce.md's tables are written from servelab.reproduce (a
saved --json run or a run of its own), block by block between markers, with the summary rebuilt;
blocks it is not asked for stay as they are."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

from servelab import cli

SCRIPT = Path(__file__).parents[2] / "scripts" / "reproduce_docs.py"


def load_script():
    spec = importlib.util.spec_from_file_location("reproduce_docs", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_blocks_are_written_from_saved_json_and_the_summary_follows(tmp_path, capsys):
    script = load_script()
    assert cli.main(["reproduce", "hera", "--size", "full", "--json"]) == 0
    saved = capsys.readouterr().out
    (tmp_path / "hera-full.json").write_text(saved)
    doc = tmp_path / "reproduce.md"
    kept = (
        "### INFaaS (reduced)\n\n| pasted |\n\n"
        "infaas, size reduced: 1 of 2 rows within tolerance (3.0 s)\n"
    )
    doc.write_text(
        "# title\n\n<!-- reproduce summary -->\nold\n<!-- /reproduce summary -->\n\n"
        "<!-- reproduce hera full -->\nstale\n<!-- /reproduce hera full -->\n\n" + kept
    )
    assert script.main(["--doc", str(doc), "--from", str(tmp_path), "hera:full",
                        "--note", "hera:full=When it ran."]) == 0  # fmt: skip
    text = doc.read_text()
    rows = json.loads(saved)["rows"]
    assert "stale" not in text and "old\n" not in text and kept in text
    assert "### Hera (full, " in text and "When it ran." in text
    assert all(r["claim"] in text for r in rows)  # every row, as the run gave it
    within = sum(r["verdict"] == "within" for r in rows)
    assert f"| hera | full | {len(rows)} | {within} |" in text
    assert "| infaas | reduced | 2 | 1 | 50% | 3 s |" in text


def test_a_missing_block_is_named(tmp_path):
    script = load_script()
    doc = tmp_path / "reproduce.md"
    doc.write_text("# nothing here\n")
    try:
        script.main(["--doc", str(doc), "rrl:full"])
    except SystemExit as stop:
        assert "no <!-- reproduce rrl full --> block" in str(stop)
    else:
        raise AssertionError("a missing block must stop the script")
