"""The ``if __name__ == "__main__":`` trap of worker processes, found before it is sprung.

Worker processes are started with the "forkserver" or "spawn" method (never fork: the C++
extension runs threads), and each of them first imports the script that the user ran, as
``__mp_main__``. A script that starts workers from its top-level code, outside an
``if __name__ == "__main__":`` block, would start them again in every worker while it is
being imported; Python refuses that, the worker dies, and all the caller would see is a worker
process that died. :func:`check` raises an error that says what to change instead, in the
parent (before any worker starts) and, should the parent not see it, in the worker.
"""

from __future__ import annotations

import ast
import multiprocessing
import os
import sys
import tokenize
from types import FrameType, ModuleType


def _reimported_main() -> ModuleType | None:
    """The ``__main__`` module when worker processes import it again (a script, or a module run
    with ``python -m``), else None (an interactive session, a notebook, ``python -c``, or a
    package's ``__main__`` such as ``python -m pytest``), as multiprocessing's spawn decides."""
    main = sys.modules.get("__main__")
    if main is None:
        return None
    spec = getattr(main, "__spec__", None)
    name = getattr(spec, "name", None)
    if name is not None:
        return None if name == "__main__" or name.endswith(".__main__") else main
    path = getattr(main, "__file__", None)
    if not isinstance(path, str) or not path:
        return None
    if os.path.splitext(os.path.basename(path))[0] == "ipython":
        return None
    return main


def _module_frame(main: ModuleType) -> FrameType | None:
    """The frame running ``main``'s top-level code, when this call comes from it."""
    frame: FrameType | None = sys._getframe(2)
    namespace = vars(main)
    while frame is not None:
        if frame.f_code.co_name == "<module>" and frame.f_globals is namespace:
            return frame
        frame = frame.f_back
    return None


def _is_main_test(test: ast.expr) -> bool:
    """``__name__ == "__main__"`` (either way round)."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return False
    if not isinstance(test.ops[0], ast.Eq):
        return False
    sides = [test.left, test.comparators[0]]
    names = [s for s in sides if isinstance(s, ast.Name) and s.id == "__name__"]
    texts = [s for s in sides if isinstance(s, ast.Constant) and s.value == "__main__"]
    return len(names) == 1 and len(texts) == 1


def _guarded(path: str, line: int) -> bool | None:
    """Whether ``line`` of the file at ``path`` lies in the body of an
    ``if __name__ == "__main__":`` block; None when the file cannot be read or parsed."""
    try:
        with tokenize.open(path) as f:
            tree = ast.parse(f.read(), filename=path)
    except (OSError, SyntaxError, UnicodeDecodeError, ValueError):
        return None
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and _is_main_test(node.test) and node.body:
            if node.body[0].lineno <= line <= (node.body[-1].end_lineno or node.body[-1].lineno):
                return True
    return False


def _message(processes: int, where: str) -> str:
    return (
        f"processes={processes} starts worker processes (servelab.sweep), and this call came "
        f"from the top-level code of {where}, "
        'outside an `if __name__ == "__main__":` block. Each worker process starts by importing '
        "that script again, which would run this call again in every worker (Python refuses "
        "that, and the worker dies). Put the script's top-level work under "
        '`if __name__ == "__main__":` (or in a main() called from there), or pass processes=1.'
    )


def check(processes: int) -> None:
    """Raises RuntimeError when starting worker processes now would spring the trap: this is a
    worker importing the user's script (its top-level code reached a call that starts workers),
    or the call comes from that script's top-level code outside the ``__main__`` block.

    ``processes`` is the number of worker processes asked for (named in the message)."""
    main = _reimported_main()
    if getattr(multiprocessing.current_process(), "_inheriting", False):
        path = getattr(main, "__file__", None) if main is not None else None
        raise RuntimeError(_message(processes, f"the script {path}" if path else "the main script"))
    if main is None:
        return
    frame = _module_frame(main)
    if frame is None:  # called from a function that the script's top level did not call
        return
    path = str(main.__file__)
    if _guarded(path, frame.f_lineno) is False:
        raise RuntimeError(_message(processes, f"the script {path} (line {frame.f_lineno})"))
