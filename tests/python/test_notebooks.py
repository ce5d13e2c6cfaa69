"""Every notebook in notebooks/ runs top to bottom (at reduced size) without an error."""

from pathlib import Path

import pytest

nbformat = pytest.importorskip(
    "nbformat", reason="nbformat is not installed (pip install -r requirements/dev.txt)"
)
nbclient = pytest.importorskip(
    "nbclient", reason="nbclient is not installed (pip install -r requirements/dev.txt)"
)

NOTEBOOKS = sorted((Path(__file__).parents[2] / "notebooks").glob("*.ipynb"))
# The systems' notebooks read ../shared/data and have their own tests.
NOTEBOOKS = [p for p in NOTEBOOKS if p.name not in ("kairos.ipynb", "ramsis.ipynb")]


@pytest.mark.notebook
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_executes(path, monkeypatch):
    monkeypatch.setenv("SERVELAB_NOTEBOOK_SMALL", "1")
    nb = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(
        nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}
    )
    client.execute()


def test_there_is_a_notebook():
    assert NOTEBOOKS, "notebooks/ holds no notebook"
