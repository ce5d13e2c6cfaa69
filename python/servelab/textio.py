"""Safe reading of the JSON and YAML files servelab reads: scenarios, profiles, artifacts, policies.

Every reader here turns a bad file into one clear exception that names the file (and line where
there is one), never a RecursionError, a crash or a memory blow-up:

- ``read_text(path, what=...)`` (``read_bytes`` for compressed files): the file as text. A missing
  path is a FileNotFoundError and a directory an IsADirectoryError, both naming the path and what
  was expected; bytes that are not UTF-8 are a ValueError
  ``<path>:<line>: not UTF-8 text (byte N)``. ``read_json`` / ``read_yaml`` read and parse.
- ``load_json(text, where=...)`` / ``load_yaml(text, where=...)``: the parsed document. Nesting
  deeper than :data:`MAX_DEPTH` levels, a key repeated in one mapping, and (YAML) aliases that
  stand for more than :data:`MAX_YAML_NODES` values are ValueErrors naming the line; so are syntax
  errors (``<where>:<line>:<column>: malformed JSON: ...``).
- ``check_json_depth(text, where=...)``: the depth check alone, for JSON handed to another parser.
- ``output_file(path, field=...)`` / ``output_folder(folder, field=...)``: where a result will be
  written, checked (or created) first; a bad place is a ValueError naming the argument.

The depth is measured without recursion (a running count of brackets outside strings; YAML's
event stream), so even a 100,000-level document is rejected cheaply.
"""

from __future__ import annotations

import io
import json
import os
import re
from pathlib import Path
from typing import Any

import numpy as np
import yaml

#: Deepest nesting of arrays/objects (sequences/mappings) accepted in any file servelab reads.
MAX_DEPTH = 64
#: Most values the aliases (``*name``) of a YAML document may stand for, counted as if expanded:
#: an alias bomb is tiny on disk and exponential once expanded (e.g. when written out as JSON).
MAX_YAML_NODES = 100_000

PathLike = str | os.PathLike[str]

# A JSON string token (no raw newline inside, as JSON requires): masked before counting brackets.
_JSON_STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"')
# A JSON object key: a string token followed by a colon.
_JSON_KEY = re.compile(r'"(?:[^"\\\n]|\\.)*"\s*:')
_CHUNK = 1 << 20  # characters per step of the depth count (bounds its memory)


# --- files -------------------------------------------------------------------------------------


def read_text(path: PathLike, *, what: str = "JSON/YAML file") -> str:
    """The UTF-8 text of the file at ``path``. ``what`` (e.g. "scenario file") names what was
    expected in the FileNotFoundError / IsADirectoryError messages."""
    return decode_text(read_bytes(path, what=what), where=str(path))


def read_bytes(path: PathLike, *, what: str = "file") -> bytes:
    """The bytes of the file at ``path``; every error names the path and what was expected."""
    path = Path(path)
    if path.exists() and not path.is_file() and not path.is_dir():
        # A device or pipe (e.g. /dev/zero) could be read forever.
        raise ValueError(f"{path}: is not a regular file, expected a {what}")
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise FileNotFoundError(f"{what} {path} does not exist") from None
    except IsADirectoryError:
        raise IsADirectoryError(f"{path}: is a directory, expected a {what}") from None
    except PermissionError:
        raise PermissionError(f"{path}: permission denied (reading a {what})") from None
    except OSError as e:
        # One-argument exceptions: str(e) and e.args[0] are the message, not an errno.
        raise OSError(f"{path}: cannot read the {what} ({e.strerror or e})") from None


def output_file(path: Any, *, field: str = "path") -> Path:
    """``path`` for a file about to be written, checked before anything is computed for it (so
    that a long measurement is not lost to a typo): ValueError naming ``field`` and the path
    when it is not a path, is a directory, or its folder does not exist or cannot be written."""
    if not isinstance(path, str | os.PathLike) or not os.fspath(path):
        raise ValueError(f"{field}={path!r} must be a file path")
    out = Path(path)
    folder = out.parent
    if out.is_dir():
        raise ValueError(f"{field}={os.fspath(path)!r} is a directory, not a file")
    if not folder.is_dir():
        why = "is not a folder" if folder.exists() else "does not exist"
        raise ValueError(f"{field}={os.fspath(path)!r}: its folder {str(folder)!r} {why}")
    if not os.access(folder, os.W_OK | os.X_OK) or (out.exists() and not os.access(out, os.W_OK)):
        raise ValueError(f"{field}={os.fspath(path)!r} cannot be written (permission denied)")
    return out


def output_folder(folder: Any, *, field: str = "folder") -> Path:
    """``folder``, created with its parents when missing; ValueError naming ``field``, the folder
    and the system's reason when it is not a path or cannot be created or written."""
    if not isinstance(folder, str | os.PathLike) or not os.fspath(folder):
        raise ValueError(f"{field}={folder!r} must be a folder path")
    out = Path(folder)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise ValueError(
            f"{field}={os.fspath(folder)!r} cannot be created ({e.strerror or e})"
        ) from None
    if not os.access(out, os.W_OK | os.X_OK):
        raise ValueError(f"{field}={os.fspath(folder)!r} cannot be written (permission denied)")
    return out


def decode_text(raw: bytes, *, where: str) -> str:
    """``raw`` decoded as UTF-8 (a leading byte-order mark dropped); ValueError naming ``where``,
    the line and the byte offset of the first byte that is not UTF-8."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        line = raw.count(b"\n", 0, e.start) + 1
        raise ValueError(f"{where}:{line}: not UTF-8 text (byte {e.start})") from None
    return text.removeprefix("\ufeff")


def open_text(path: PathLike, *, what: str = "CSV file") -> io.StringIO:
    """The file's text as a stream for csv readers, with read_text's errors (path, UTF-8 byte)."""
    return io.StringIO(read_text(path, what=what), newline="")


def read_json(path: PathLike, *, what: str = "JSON file") -> Any:
    """The JSON document of the file at ``path`` (see :func:`read_text` and :func:`load_json`)."""
    return load_json(read_text(path, what=what), where=str(path))


def read_yaml(path: PathLike, *, what: str = "YAML file") -> Any:
    """The YAML document of the file at ``path`` (see :func:`read_text` and :func:`load_yaml`)."""
    return load_yaml(read_text(path, what=what), where=str(path))


# --- JSON --------------------------------------------------------------------------------------


def _mask_strings(text: str) -> str:
    """``text`` with the inside of every JSON string blanked, same length: brackets and colons
    left are structure, and offsets still point into ``text``."""
    return _JSON_STRING.sub(lambda m: '"' + " " * (len(m.group()) - 2) + '"', text)


def _structure_codes(masked: str) -> np.ndarray:
    """The characters of ``masked`` as bytes, one per character (non-ASCII ones, never structure,
    become '?')."""
    return np.frombuffer(masked.encode("ascii", errors="replace"), dtype=np.uint8)


def _bracket_steps(codes: np.ndarray) -> np.ndarray:
    """+1 at each '[' or '{' and -1 at each ']' or '}'."""
    opens = (codes == ord("[")) | (codes == ord("{"))
    closes = (codes == ord("]")) | (codes == ord("}"))
    return opens.astype(np.int32) - closes.astype(np.int32)


def check_json_depth(text: str, *, where: str, limit: int = MAX_DEPTH) -> None:
    """ValueError naming ``where`` and the line if arrays/objects nest deeper than ``limit``."""
    if text.count("[") + text.count("{") <= limit:
        return  # too few brackets to nest that deep
    masked = _mask_strings(text)
    depth = 0
    for start in range(0, len(masked), _CHUNK):
        codes = _structure_codes(masked[start : start + _CHUNK])
        running = depth + np.cumsum(_bracket_steps(codes))
        too_deep = np.flatnonzero(running > limit)
        if too_deep.size:
            position = start + int(too_deep[0])
            line = text.count("\n", 0, position) + 1
            raise ValueError(
                f"{where}:{line}: nesting is too deep: more than {limit} levels of JSON "
                "arrays/objects"
            )
        if running.size:
            depth = int(running[-1])


class _DuplicateKey(Exception):
    """Raised inside json.loads: `key` repeats in the `index`-th object to close."""

    def __init__(self, key: str, index: int) -> None:
        super().__init__(key, index)
        self.key, self.index = key, index


def _strict_pairs() -> Any:
    """An object_pairs_hook that refuses a key repeated in one object. Objects are counted in the
    order they close, which is the order of their '}' in the text: the error path finds the
    object from its count."""
    closed = 0

    def hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        nonlocal closed
        index, closed = closed, closed + 1
        out: dict[str, Any] = {}
        for key, value in pairs:
            if key in out:
                raise _DuplicateKey(key, index)
            out[key] = value
        return out

    return hook


def _duplicate_lines(text: str, key: str, index: int) -> tuple[int, int]:
    """The lines of the first and the repeated `key` in the `index`-th object to close (0, 0 if
    they cannot be told apart). Runs only on the error path."""
    masked = _mask_strings(text)
    codes = _structure_codes(masked)
    depth = np.cumsum(_bracket_steps(codes))  # the depth just after each character
    closings = np.flatnonzero(codes == ord("}"))
    if index >= closings.size:
        return 0, 0
    end = int(closings[index])
    inside = int(depth[end - 1])  # the depth of the object's own keys
    openings = np.flatnonzero((codes[:end] == ord("{")) & (depth[:end] == inside))
    start = int(openings[-1]) if openings.size else 0
    lines = []
    for m in _JSON_KEY.finditer(masked, start, end):
        if depth[m.start()] != inside:
            continue  # a key of a nested object
        token = text[m.start() : m.end()].rstrip()[:-1].rstrip()  # the string before the ':'
        if json.loads(token) == key:
            lines.append(text.count("\n", 0, m.start()) + 1)
    return (lines[0], lines[1]) if len(lines) >= 2 else (0, 0)


def load_json(text: str, *, where: str) -> Any:
    """The JSON document in ``text``; ValueError starting ``<where>:<line>`` for a syntax error,
    nesting deeper than :data:`MAX_DEPTH` or a key repeated in one object."""
    check_json_depth(text, where=where)
    try:
        return json.loads(text, object_pairs_hook=_strict_pairs())
    except _DuplicateKey as e:
        first, again = _duplicate_lines(text, e.key, e.index)
        at = f"{where}:{again}" if again else where
        also = f" (first on line {first})" if first else ""
        raise ValueError(f"{at}: duplicate key {json.dumps(e.key)} in one object{also}") from None
    except json.JSONDecodeError as e:
        raise ValueError(f"{where}:{e.lineno}:{e.colno}: malformed JSON: {e.msg}") from None
    except RecursionError:
        raise ValueError(f"{where}: nesting is too deep for JSON arrays/objects") from None
    except ValueError as e:  # e.g. an integer with more digits than Python converts
        raise ValueError(f"{where}: malformed JSON: {e}") from None


# --- YAML --------------------------------------------------------------------------------------


class _DuplicateYamlKey(Exception):
    def __init__(self, key: Any, line: int, first_line: int) -> None:
        super().__init__(key, line, first_line)
        self.key, self.line, self.first_line = key, line, first_line


class _StrictLoader(yaml.SafeLoader):
    """SafeLoader that refuses a key repeated in one mapping (PyYAML keeps the last one)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        if isinstance(node, yaml.MappingNode):
            first_lines: dict[Any, int] = {}
            for key_node, _ in node.value:
                if not isinstance(key_node, yaml.ScalarNode) or key_node.tag.endswith(":merge"):
                    continue  # merge keys ('<<') override on purpose; complex keys are rare
                key = self.construct_object(key_node)
                line = key_node.start_mark.line + 1
                if key in first_lines:
                    raise _DuplicateYamlKey(key, line, first_lines[key])
                first_lines[key] = line
        return super().construct_mapping(node, deep=deep)


def _yaml_error(where: str, e: yaml.YAMLError) -> ValueError:
    """``<where>:<line>:<column>: malformed YAML: ...`` at the problem, saying where the construct
    it broke (e.g. a flow mapping left open) started."""
    problem_mark = getattr(e, "problem_mark", None)
    context_mark = getattr(e, "context_mark", None)
    problem = getattr(e, "problem", None) or str(e)
    context = getattr(e, "context", None)
    detail = problem
    if context and context_mark is not None:
        opened = f"line {context_mark.line + 1}, column {context_mark.column + 1}"
        detail = f"{context} at {opened}: {problem}"
    elif context:
        detail = f"{context}: {problem}"
    mark = problem_mark or context_mark
    if mark is None:
        return ValueError(f"{where}: malformed YAML: {detail}")
    return ValueError(f"{where}:{mark.line + 1}:{mark.column + 1}: malformed YAML: {detail}")


_OPEN_EVENTS = (yaml.SequenceStartEvent, yaml.MappingStartEvent)
_CLOSE_EVENTS = (yaml.SequenceEndEvent, yaml.MappingEndEvent)


def _check_yaml_shape(text: str, where: str) -> None:
    """Walks the event stream (no recursion): nesting deeper than MAX_DEPTH, or aliases standing
    for more than MAX_YAML_NODES values in all, is a ValueError naming the line."""
    open_nodes: list[list[Any]] = []  # [anchor, values inside so far] per open collection
    anchor_sizes: dict[str, int] = {}  # values of each anchored node, its own aliases expanded
    alias_values = 0
    for event in yaml.parse(text, Loader=yaml.SafeLoader):
        line = event.start_mark.line + 1
        if isinstance(event, _OPEN_EVENTS):
            open_nodes.append([event.anchor, 1])
            if len(open_nodes) > MAX_DEPTH:
                raise ValueError(
                    f"{where}:{line}: nesting is too deep: more than {MAX_DEPTH} levels of "
                    "YAML sequences/mappings"
                )
            continue
        if isinstance(event, _CLOSE_EVENTS):
            anchor, size = open_nodes.pop()
        elif isinstance(event, yaml.ScalarEvent):
            anchor, size = event.anchor, 1
        elif isinstance(event, yaml.AliasEvent):
            anchor, size = None, anchor_sizes.get(event.anchor, 1)
            alias_values += size
            if alias_values > MAX_YAML_NODES:
                raise ValueError(
                    f"{where}:{line}: the document expands to more than {MAX_YAML_NODES} values "
                    "through its aliases (*name): write the values out, or use fewer aliases"
                )
        else:
            continue
        if anchor is not None:
            anchor_sizes[anchor] = size
        if open_nodes:
            open_nodes[-1][1] += size


def load_yaml(text: str, *, where: str) -> Any:
    """The YAML document in ``text`` (safe tags only); ValueError starting ``<where>:<line>`` for
    a syntax error, nesting deeper than :data:`MAX_DEPTH`, aliases expanding beyond
    :data:`MAX_YAML_NODES` values or a key repeated in one mapping."""
    try:
        _check_yaml_shape(text, where)
        return yaml.load(text, Loader=_StrictLoader)
    except _DuplicateYamlKey as e:
        raise ValueError(
            f"{where}:{e.line}: duplicate key {e.key!r} in one mapping (first on line "
            f"{e.first_line})"
        ) from None
    except yaml.YAMLError as e:
        raise _yaml_error(where, e) from None
    except RecursionError:
        raise ValueError(f"{where}: nesting is too deep for YAML sequences/mappings") from None
