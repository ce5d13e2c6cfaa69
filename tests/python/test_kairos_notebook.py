"""notebooks/kairos.ipynb runs top to bottom at reduced size on the Kairos artifact's data.

It needs ../shared/data/kairos, so it runs here (skipped with a message when the data is absent)
rather than in test_notebooks.py.
"""

from pathlib import Path

import pytest

from .shared_data import shared_path

nbformat = pytest.importorskip(
    "nbformat", reason="nbformat is not installed (pip install -r requirements/dev.txt)"
)
nbclient = pytest.importorskip(
    "nbclient", reason="nbclient is not installed (pip install -r requirements/dev.txt)"
)

NOTEBOOK = Path(__file__).parents[2] / "notebooks" / "kairos.ipynb"


@pytest.mark.notebook
def test_kairos_notebook_executes(monkeypatch):
    shared_path("kairos")
    monkeypatch.setenv("SERVELAB_NOTEBOOK_SMALL", "1")
    nb = nbformat.read(NOTEBOOK, as_version=4)
    client = nbclient.NotebookClient(
        nb,
        timeout=600,
        kernel_name="python3",
        resources={"metadata": {"path": str(NOTEBOOK.parent)}},
    )
    client.execute()
    # The last cell is the report of ours beside the paper's: show it in the test output.
    report = nb.cells[-1].outputs[0]["data"]["text/plain"]
    print("\n" + report)
    assert "Kairos+ evaluations to the optimum" in report
