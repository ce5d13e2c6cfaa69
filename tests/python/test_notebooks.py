"""Every notebook in notebooks/ runs top to bottom without an error, at reduced size (the
notebooks' default; SERVELAB_NOTEBOOK_FULL=1 would run the full sizes): shorter runs and fewer
points per loop, but every model the notebook covers and every cell.

The systems' notebooks read ../shared/data: they are skipped, saying so, when it is absent, and
their tests also check what they print.
"""

import json
import re
from pathlib import Path

import pytest

from .shared_data import shared_path

nbformat = pytest.importorskip(
    "nbformat", reason="nbformat is not installed (pip install -r requirements/dev.txt)"
)
nbclient = pytest.importorskip(
    "nbclient", reason="nbclient is not installed (pip install -r requirements/dev.txt)"
)

FOLDER = Path(__file__).parents[2] / "notebooks"
SYSTEM_NOTEBOOKS = ("kairos.ipynb", "ramsis.ipynb", "rrl.ipynb", "hera.ipynb", "infaas.ipynb")
NOTEBOOKS = [p for p in sorted(FOLDER.glob("*.ipynb")) if p.name not in SYSTEM_NOTEBOOKS]


def run_notebook(path: Path, monkeypatch, **env: str):
    """Executes the notebook at reduced size and returns it with its outputs."""
    monkeypatch.delenv("SERVELAB_NOTEBOOK_FULL", raising=False)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    nb = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(
        nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}
    )
    client.execute()
    return nb


def printed(nb) -> str:
    """Everything the notebook's code cells printed."""
    return "".join(
        out.get("text", "") for cell in nb.cells if cell.cell_type == "code" for out in cell.outputs
    )


def assert_shows_the_reproduce_table(nb, foot: str) -> None:
    """The notebook's last cell shows servelab.reproduce's table, its summary line printed."""
    assert re.search(rf"{re.escape(foot)}: \d+ of \d+ rows within tolerance", printed(nb))
    shown = nb.cells[-1].outputs[-1]["data"]["text/plain"]
    assert "verdict" in shown and "claim" in shown


@pytest.mark.notebook
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_executes(path, monkeypatch):
    run_notebook(path, monkeypatch)


@pytest.mark.notebook
def test_kairos_notebook_reports_ours_beside_the_paper(monkeypatch):
    data = shared_path("kairos")
    nb = run_notebook(FOLDER / "kairos.ipynb", monkeypatch)
    report_cell = next(c for c in nb.cells if c.get("id") == "cell-16")  # ours beside the paper
    report = report_cell.outputs[0]["data"]["text/plain"]
    print("\n" + report)
    assert "Kairos+ evaluations to the optimum" in report
    assert_shows_the_reproduce_table(nb, "kairos, size reduced (parts fig12, fig14)")
    # The reduced run still simulates every model of the artifact, through every cell.
    simulated = re.search(r"small run: simulating (.*);", printed(nb)).group(1).split(", ")
    models = json.loads((data / "allocator_profile.json").read_text())
    assert sorted(simulated) == sorted(models)


@pytest.mark.notebook
def test_ramsis_notebook_reproduces_the_artifact_mdp_and_fig7(monkeypatch):
    data = shared_path("ramsis")
    nb = run_notebook(FOLDER / "ramsis.ipynb", monkeypatch, SERVELAB_RAMSIS_DATA=str(data))
    assert "3334 states, 3979 state-action pairs" in printed(nb)
    assert "total variation distance" in printed(nb)
    assert_shows_the_reproduce_table(nb, "ramsis, size reduced (parts artifact)")


@pytest.mark.notebook
def test_rrl_notebook_reports_convergence_beside_the_paper(monkeypatch):
    data = shared_path("rrl")
    nb = run_notebook(FOLDER / "rrl.ipynb", monkeypatch, SERVELAB_RRL_DATA=str(data))
    text = printed(nb)
    assert "Fig. 11 (region size sweep)" in text
    assert "== trace" in text and "RRL vs point-based Q-learning" in text
    assert "speed-up of radius 1 over point-based Q-learning" in text
    assert_shows_the_reproduce_table(nb, "rrl, size reduced")


def test_there_is_a_notebook():
    assert NOTEBOOKS, "notebooks/ holds no notebook"


@pytest.mark.notebook
def test_hera_notebook_reproduces_its_figures_beside_the_paper(monkeypatch):
    nb = run_notebook(FOLDER / "hera.ipynb", monkeypatch)  # no data: Hera publishes none
    report = printed(nb)
    print("\n" + report)
    assert "Pearson(affinity, co-located QPS)" in report
    assert "windows over the SLA" in report
    assert_shows_the_reproduce_table(nb, "hera, size reduced")


@pytest.mark.notebook
def test_infaas_notebook_reproduces_table3_beside_the_paper(monkeypatch):
    nb = run_notebook(FOLDER / "infaas.ipynb", monkeypatch)  # no data: INFaaS publishes none
    report = printed(nb)
    print("\n" + report)
    assert "QPS  SLO" in report
    assert "choices by kind" in report
    assert "share of queries on CPU" in report
