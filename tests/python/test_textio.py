"""servelab.textio, the one reader of every JSON/YAML file: whatever the bytes, one clear exception
naming the file (and line), never a RecursionError, a crash or a memory blow-up."""

import re

import pytest

from servelab import textio

DEEP = 100_000  # levels: far beyond the interpreter's recursion limit


def alias_bomb(levels: int = 9) -> str:
    """A YAML document of a few hundred bytes whose aliases expand to 9**levels values."""
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x]"]
    for i in range(1, levels):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]")
    lines.append(f"name: *a{levels - 1}")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("opening", ["[", '{"a":'])
def test_deep_json_is_a_value_error_naming_the_file(opening):
    closing = "]" if opening == "[" else "}"
    text = opening * DEEP + "1" + closing * DEEP
    with pytest.raises(
        ValueError, match=r"^deep\.json:1: nesting is too deep: more than 64 levels"
    ):
        textio.load_json(text, where="deep.json")


def test_json_depth_ignores_brackets_inside_strings_and_counts_lines():
    inside_strings = '{"a": "' + "[" * 500 + '"}'
    assert textio.load_json(inside_strings, where="x.json") == {"a": "[" * 500}
    at_line_3 = '{\n"a": 1,\n"b": ' + "[" * 70 + "]" * 70 + "}"
    with pytest.raises(ValueError, match=r"^x\.json:3: nesting is too deep"):
        textio.load_json(at_line_3, where="x.json")
    textio.check_json_depth("[" * 64 + "]" * 64, where="ok.json")  # the limit itself is fine


def test_deep_yaml_is_a_value_error_naming_the_file():
    with pytest.raises(ValueError, match=r"^deep\.yaml:1: nesting is too deep: more than 64"):
        textio.load_yaml("[" * DEEP + "]" * DEEP, where="deep.yaml")
    block = "".join(f"{'  ' * i}k{i}:\n" for i in range(80)) + "  " * 80 + "v\n"
    with pytest.raises(ValueError, match=r"^block\.yaml:65: nesting is too deep"):
        textio.load_yaml(block, where="block.yaml")


def test_json_duplicate_key_names_the_key_and_both_lines():
    text = '{\n "a": 1,\n "b": {"a": 2, "c": "x\\"}"},\n "a": 3\n}'
    with pytest.raises(
        ValueError, match=r'^d\.json:4: duplicate key "a" in one object \(first on line 2\)'
    ):
        textio.load_json(text, where="d.json")
    nested = '[{"q": 1},\n {"z": 1,\n  "z": 2}]'
    with pytest.raises(ValueError, match=r'^d\.json:3: duplicate key "z" .*first on line 2'):
        textio.load_json(nested, where="d.json")
    # The same key in different objects is no duplicate.
    assert textio.load_json('[{"a": 1}, {"a": 2}]', where="d.json") == [{"a": 1}, {"a": 2}]


def test_yaml_duplicate_key_names_the_key_and_both_lines():
    with pytest.raises(
        ValueError, match=r"^d\.yaml:4: duplicate key 'a' in one mapping \(first on line 1\)"
    ):
        textio.load_yaml("a: 1\nb:\n  a: 2\na: 3\n", where="d.yaml")
    # A merge key overrides on purpose; the same key in sibling mappings is fine.
    merged = textio.load_yaml("base: &b {x: 1}\nd: {<<: *b, x: 2}\n", where="m.yaml")
    assert merged == {"base": {"x": 1}, "d": {"x": 2}}


def test_yaml_alias_bomb_is_refused_before_it_expands():
    text = alias_bomb()
    assert len(text) < 1000
    with pytest.raises(
        ValueError,
        match=r"^bomb\.yaml:\d+: the document expands to more than 100000 values through",
    ):
        textio.load_yaml(text, where="bomb.yaml")
    # A few aliases stay allowed.
    assert textio.load_yaml(alias_bomb(levels=2), where="ok.yaml")["name"][0] == ["x"] * 9


@pytest.mark.parametrize(
    ("loader", "text", "message"),
    [
        (
            textio.load_json,
            '{"a": [1, 2',
            r"^s\.json:1:12: malformed JSON: Expecting ',' delimiter",
        ),
        (textio.load_json, "1" * 5000, r"^s\.json: malformed JSON: Exceeds the limit"),
        (
            textio.load_yaml,
            "a: [1, 2\n",
            r"^s\.json:2:1: malformed YAML: while parsing a flow sequence at line 1, column 4",
        ),
        (
            textio.load_yaml,
            "!!python/object:os.system x",
            r"^s\.json:1:1: malformed YAML: could not",
        ),
        (textio.load_yaml, "a: *nowhere", r"^s\.json:1:4: malformed YAML: found undefined alias"),
    ],
)
def test_syntax_errors_name_the_file_and_line(loader, text, message):
    with pytest.raises(ValueError, match=message):
        loader(text, where="s.json")


def test_read_text_names_the_path_and_what_was_expected(tmp_path):
    with pytest.raises(
        FileNotFoundError,
        match=rf"^scenario file {re.escape(str(tmp_path))}/no\.yaml does not exist$",
    ):
        textio.read_text(tmp_path / "no.yaml", what="scenario file")
    with pytest.raises(
        IsADirectoryError,
        match=rf"^{re.escape(str(tmp_path))}: is a directory, expected a scenario file$",
    ):
        textio.read_text(tmp_path, what="scenario file")
    with pytest.raises(ValueError, match=r"^/dev/zero: is not a regular file, expected a profile"):
        textio.read_text("/dev/zero", what="profile")
    binary = tmp_path / "random.json"
    binary.write_bytes(b'{"a":\n "\xff\xfe"}')
    with pytest.raises(
        ValueError, match=rf"^{re.escape(str(binary))}:2: not UTF-8 text \(byte 8\)$"
    ):
        textio.read_text(binary)
    with_bom = tmp_path / "bom.json"
    with_bom.write_bytes(b'\xef\xbb\xbf{"a": 1}')
    assert textio.read_json(with_bom) == {"a": 1}


def test_errors_carry_the_message_not_an_errno(tmp_path):
    # CLIs print e.args[0]: it must be the message.
    with pytest.raises(FileNotFoundError) as info:
        textio.read_json(tmp_path / "missing.json")
    assert info.value.args == (f"JSON file {tmp_path / 'missing.json'} does not exist",)
