"""notebooks/ramsis.ipynb runs top to bottom at reduced size on the RAMSIS artifact's data.

It needs ../shared/data/ramsis, so it runs here (skipped with a message when the data is absent)
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

NOTEBOOK = Path(__file__).parents[2] / "notebooks" / "ramsis.ipynb"


@pytest.mark.notebook
def test_ramsis_notebook_executes(monkeypatch):
    data = shared_path("ramsis")
    monkeypatch.setenv("SERVELAB_NOTEBOOK_SMALL", "1")
    monkeypatch.setenv("SERVELAB_RAMSIS_DATA", str(data))
    nb = nbformat.read(NOTEBOOK, as_version=4)
    client = nbclient.NotebookClient(
        nb,
        timeout=600,
        kernel_name="python3",
        resources={"metadata": {"path": str(NOTEBOOK.parent)}},
    )
    client.execute()
    printed = "".join(
        out.get("text", "") for cell in nb.cells if cell.cell_type == "code" for out in cell.outputs
    )
    assert "3334 states, 3979 state-action pairs" in printed
    assert "total variation distance" in printed
