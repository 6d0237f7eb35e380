"""YAML read with positions: values and the file position of every character."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mtplint.extract.yamlpos import YamlError, YNode, load, load_all
from mtplint.source import SourceFile

COMPOSE = """\
x-common: &common
  environment:
    HF_HOME: /models
services:
  vllm:
    <<: *common
    image: vllm/vllm-openai:v0.11.0
    command: >
      Qwen/Qwen3.6-27B
      --speculative-config '{"method": "mtp", "num_speculative_tokens": 2}'
      --max-num-seqs 8
    entrypoint: |
      vllm serve
        --port 8000
    labels:
      note: "quoted \\"value\\" \\u00e9 end"
"""




def test_folded_block_positions_point_at_tokens() -> None:
    source = SourceFile.from_text(COMPOSE)
    document = load(source)
    assert document is not None
    command = document.get("services").get("vllm").get("command")  # type: ignore[union-attr]
    assert command is not None and command.text is not None
    text = command.text
    assert text.text.startswith("Qwen/Qwen3.6-27B --speculative-config '{")
    start = text.text.index("--max-num-seqs")
    span = text.span(start, start + len("--max-num-seqs"))
    assert span is not None and (span.line, span.column) == (11, 7)
    json_start = text.text.index("num_speculative_tokens")
    span = text.span(json_start, json_start + 3)
    assert span is not None and (span.line, span.column) == (10, 48)


def test_literal_block_and_escapes() -> None:
    source = SourceFile.from_text(COMPOSE)
    document = load(source)
    assert document is not None
    service = document.get("services").get("vllm")  # type: ignore[union-attr]
    entry = service.get("entrypoint").text  # type: ignore[union-attr]
    port = entry.text.index("--port")
    assert (entry.span(port, port + 6).line, entry.span(port, port + 6).column) == (14, 9)  # type: ignore[union-attr]
    note = service.get("labels").get("note").text  # type: ignore[union-attr]
    assert note.text == 'quoted "value" é end'
    end = note.text.index("end")
    assert note.span(end, end + 3).column == source.text.splitlines()[15].index("end") + 1  # type: ignore[union-attr]


def test_merge_keys_are_applied_and_explicit_keys_win() -> None:
    source = SourceFile.from_text("base: &b {a: 1, b: 2}\nuse:\n  <<: *b\n  b: 3\n")
    document = load(source)
    assert document is not None
    assert document.get("use").python() == {"b": 3, "a": 1}  # type: ignore[union-attr]


def test_alias_bomb_stays_small() -> None:
    lines = ['a0: &a0 ["x", "x", "x", "x", "x", "x", "x", "x", "x"]']
    for level in range(1, 12):
        refs = ", ".join([f"*a{level - 1}"] * 9)
        lines.append(f"a{level}: &a{level} [{refs}]")
    document = load(SourceFile.from_text("\n".join(lines) + "\n"))
    assert document is not None
    assert document.get("a11").is_seq  # type: ignore[union-attr]


def test_an_alias_is_the_node_it_names_and_a_file_without_anchors_is_read_the_same() -> None:
    """Nodes are remembered only when the text has an anchor; an alias then shares the node (an
    alias bomb stays small), and an anchor-free file gives the same trees."""
    shared = load(SourceFile.from_text("base: &b [1, 2]\nuse: *b\nalso: *b\n"))
    assert shared is not None
    assert shared.get("use") is shared.get("base") is shared.get("also")
    text = "a: [1, {b: 'x'}]\nc: {d: [e, f]}\n"
    plain = load(SourceFile.from_text(text))
    anchored = load(SourceFile.from_text(text + "z: &unused 1\n"))
    assert plain is not None and anchored is not None
    assert plain.python() == {key: value for key, value in anchored.python().items() if key != "z"}  # type: ignore[union-attr]


def test_crlf_and_multiple_documents() -> None:
    source = SourceFile.from_text("a: 1\r\n---\r\nb: \"two\"\r\n")
    documents = load_all(source)
    assert [d.python() for d in documents] == [{"a": 1}, {"b": "two"}]
    two = documents[1].get("b").text  # type: ignore[union-attr]
    assert (two.span().line, two.span().column) == (3, 5)  # type: ignore[union-attr]


def test_python_tags_are_never_constructed() -> None:
    document = load(SourceFile.from_text("x: !!python/object/apply:os.system ['echo hi']\n"))
    assert document is not None
    assert document.get("x").is_seq  # type: ignore[union-attr]


def test_invalid_yaml_reports_offset() -> None:
    source = SourceFile.from_text("services:\n  a:\n    command: [unclosed\n")
    with pytest.raises(YamlError) as error:
        load(source)
    assert source.position(error.value.offset)[0] >= 3


def test_scalar_tags_are_those_pyyaml_gives() -> None:
    """Tags come from a quicker resolver than PyYAML's (each plain text resolved once per file):
    every kind of scalar, plain, quoted and repeated, must get the tag PyYAML's safe loader gives."""
    import yaml

    plain = ["yes", "No", "on", "OFF", "y", "~", "null", "", "0x1F", "0o17", "017", "1_000", "-3", "+.inf", ".NaN",
             "1e3", "6.02e+23", "2001-12-14t21:59:43.10-05:00", "2002-12-14", "=", "<<", "12:30:00", "0b101",
             "text", "3.2.1", "-", "!", ".5"]
    text = "".join(f"- {value}\n- '{value}'\n- {value}\n" for value in plain) + "- {a: 1, <<: {b: 2}}\n- [x]\n"
    pyyaml = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # the C one where built (as mtplint reads)
    expected = [[node.tag for node in document.value] for document in yaml.compose_all(text, Loader=pyyaml)]
    documents = load_all(SourceFile.from_text(text))
    assert [[node.tag for node in document.items] for document in documents] == expected
    assert documents[0].items[-2].python() == {"a": 1, "b": 2}


_SKIPPABLE = set(" \t\r\n\\\"'")
_ESCAPE_LENGTHS = {"x": 4, "u": 6, "U": 10}


def _stepwise_offsets(raw: str, value: str, raw_start: int, raw_end: int) -> list[int]:
    """yamlpos.align's offsets as it first worked them out: one character at a time, no shortcut."""
    offsets: list[int] = []
    pointer = raw_start
    for char in value:
        if char in " \t\n":
            if pointer < raw_end and raw[pointer] in " \t\r\n":
                offsets.append(pointer)
                pointer += 1
            else:
                offsets.append(min(pointer, raw_end))
            continue
        probe = pointer
        while probe < raw_end and raw[probe] != char and raw[probe] in _SKIPPABLE:
            probe += 1
        if probe < raw_end and raw[probe] == char:
            offsets.append(probe)
            pointer = probe + 1
        elif pointer < raw_end and raw[pointer] == "\\":
            offsets.append(pointer)
            pointer += _ESCAPE_LENGTHS.get(raw[pointer + 1 : pointer + 2], 2)
        else:
            offsets.append(min(pointer, raw_end))
    offsets.append(min(pointer, raw_end))
    return offsets


def test_a_value_that_is_its_raw_text_maps_as_the_stepwise_walk_maps_it() -> None:
    from mtplint.extract.yamlpos import align

    raw = "key: plain value\n  'quoted \\\\ text'\n\t\"tab\\tand\\nnewline\" end\r\n"
    source = SourceFile.from_text(raw)
    for start in range(len(raw) + 1):
        for end in range(start, len(raw) + 1):
            for stop in range(start, end + 1):
                value = raw[start:stop]
                assert list(align(source, value, start, end).offsets) == _stepwise_offsets(raw, value, start, end)


_RAW_PIECES = st.sampled_from([" ", "  ", "\t", "\n", "\r\n", "\\", "\\t", "\\u00e9", "'", "''", '"', "a", "b",
                               "ab", "--port", "8000", "é", "#"])


@settings(max_examples=400, deadline=None)
@given(raw=st.lists(_RAW_PIECES, max_size=20).map("".join), value=st.lists(_RAW_PIECES, max_size=12).map("".join),
       cut=st.integers(0, 40), drop=st.integers(0, 40))
def test_any_value_maps_as_the_stepwise_walk_maps_it(raw: str, value: str, cut: int, drop: int) -> None:
    from mtplint.extract.yamlpos import align

    source = SourceFile.from_text(raw)
    start = min(cut, len(raw))
    end = max(start, len(raw) - drop)
    # a random value, and one made of the raw text the way folding and unescaping make values
    folded = raw[start:end].replace("\n  ", " ").replace("''", "'").replace("\\t", "\t")
    for candidate in (value, folded, raw[start:end]):
        assert list(align(source, candidate, start, end).offsets) == _stepwise_offsets(raw, candidate, start, end)


def test_scalars_of_every_style_map_as_the_stepwise_walk_maps_them() -> None:
    from mtplint.extract.yamlpos import _content_start

    for document in load_all(SourceFile.from_text(COMPOSE + "more: 'it''s'\nfold: >-\n  a  b\n\n  c\\d\n")):
        stack = [document]
        while stack:
            node = stack.pop()
            stack.extend([*node.items, *(n for pair in node.pairs for n in pair)])
            if node.is_scalar and node.text is not None:
                start = _content_start(node.source, node.start, node.style)
                assert list(node.text.offsets) == _stepwise_offsets(node.source.text, node.text.text, start, node.end)


def _shape(node: YNode, seen: set[int] | None = None) -> object:
    """Everything a node holds, its children's too (a node reached again: its position)."""
    seen = set() if seen is None else seen
    if id(node) in seen:
        return ("again", node.start)
    seen.add(id(node))
    return (node.kind, node.tag, node.start, node.end, node.style, node.str if node.is_scalar else None,
            node.source, [_shape(item, seen) for item in node.items],
            [(_shape(key, seen), _shape(value, seen)) for key, value in node.pairs])


def _converted(source: SourceFile, max_nodes: int) -> object:
    """What the general converter (which remembers every node and says where a limit is passed)
    makes of ``source``: its trees' shapes, or the error."""
    import yaml

    from mtplint.extract.yamlpos import _COMPOSER, _Converter

    converter = _Converter(source, max_nodes)
    nodes = list(yaml.compose_all(source.text, Loader=_COMPOSER))  # held: the converter knows nodes by id
    try:
        return [_shape(converter.convert(node)) for node in nodes if node is not None]
    except YamlError as error:
        return ("error", str(error), error.offset)


def _loaded(source: SourceFile, max_nodes: int) -> object:
    from mtplint.extract.yamlpos import _load_all

    try:
        return [_shape(document) for document in _load_all(source, max_nodes)]
    except YamlError as error:
        return ("error", str(error), error.offset)


_TREES = [
    COMPOSE, "a: 1\n", "- a\n- [b, {c: d}]\n- {e: [f, g]}\n", "x\n", "--- a\n--- [b]\n--- {c: 1}\n...\n",
    "merge:\n  <<: {a: 1, b: 2}\n  b: 3\n", "m: {<<: [{a: 1}, {a: 2, c: 3}], d: 4}\n", "m:\n  <<: x\n  y: 1\n",
    "m: {<<: [x, {a: 1}], b: 2}\n", "? [a, b]\n: c\n? {d: e}\n: [f]\n", "a: !!python/object x\nb: !custom [1]\n",
    "empty:\n seq: []\n map: {}\n none:\n", "block: |\n  a\n  b\nfold: >-\n  c\n  d\n", "---\n---\n",
    "l: " + "[" * 99 + "]" * 99 + "\n", "l: " + "[" * 100 + "x" + "]" * 100 + "\n",
    "l: " + "{a: " * 150 + "1" + "}" * 150 + "\n", "l: " + "{a: " * 501 + "1" + "}" * 501 + "\n",
    "\n".join(f"k{i}: [{i}, {{v: {i}}}]" for i in range(50)) + "\n",
]


@pytest.mark.parametrize("text", _TREES)
def test_a_text_without_anchors_gives_the_trees_the_general_converter_gives(text: str) -> None:
    """Without an anchor a quicker builder makes the trees; it leaves deep nesting and too many nodes
    to the general converter, so limits are reported at the same node, with any budget."""
    source = SourceFile.from_text(text)
    full = _converted(source, 200_000)
    assert _loaded(source, 200_000) == full
    if isinstance(full, list):
        # every budget up to the first that the trees fit in: the limit is passed at the same node
        for max_nodes in range(1_000):
            converted = _converted(source, max_nodes)
            assert _loaded(source, max_nodes) == converted
            if converted == full:
                break


_PLAIN_VALUES = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-10, 10), st.sampled_from(["a", "b c", "<<", "1.5", "", "x: y"])),
    lambda children: st.one_of(st.lists(children, max_size=4),
                               st.dictionaries(st.sampled_from(["k", "<<", "l", "m n"]), children, max_size=4)),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(value=_PLAIN_VALUES, flow=st.sampled_from([None, True, False]), max_nodes=st.integers(0, 40))
def test_any_text_without_anchors_gives_the_trees_the_general_converter_gives(value: object, flow: bool | None,
                                                                             max_nodes: int) -> None:
    import yaml

    # a plain `<<` key is a merge key (the dumper quotes it)
    source = SourceFile.from_text(yaml.safe_dump(value, default_flow_style=flow).replace("'<<'", "<<"))
    assert _loaded(source, 200_000) == _converted(source, 200_000)
    assert _loaded(source, max_nodes) == _converted(source, max_nodes)


def test_get_and_scalar_text_answer_as_their_plain_definitions() -> None:
    """``get`` compares a key's text alone where the key asked for is not empty (only a scalar has a
    text), and ``scalar_text`` reads the slots: both answer as written out plainly, on every node."""
    from mtplint.extract.yamlpos import scalar_text

    text = ("a: 1\n'': empty\n? [x]\n: seq-key\n? {y: 1}\n: map-key\n~: null-key\nnull: word\nb: ~\nc: [1, ~, '']\n"
            "d: {'': 2, e: {f: null}}\n" + COMPOSE.replace("services:", "other:"))
    documents = load_all(SourceFile.from_text(text))
    assert documents
    for document in documents:
        stack = [document]
        while stack:
            node = stack.pop()
            stack.extend([*node.items, *(n for pair in node.pairs for n in pair)])
            assert scalar_text(node) == (node.str if node.is_scalar and not node.is_null else None)
            for key in {"", "missing", "~", "null", *(k.str for k, _ in node.pairs)}:
                expected = next((value for key_node, value in node.pairs
                                 if key_node.is_scalar and key_node.str == key), None)
                assert node.get(key) is expected
    assert scalar_text(None) is None


@settings(max_examples=300, deadline=None)
@given(words=st.lists(st.text(alphabet="0123456789+-._eEoxXyYnNtTfFuUlL~<=: ", min_size=0, max_size=8), max_size=12),
       held=st.sampled_from([1, 2, 4096]))
def test_plain_texts_get_the_tags_pyyaml_gives_however_many_are_remembered(words: list[str], held: int) -> None:
    """Tags of plain texts are remembered for every file read (up to a bound, then forgotten): each
    text, read again in another file or after forgetting, keeps the tag PyYAML's loader gives it."""
    import yaml

    from mtplint.extract import yamlpos

    text = "".join(f"- {word}\n" for word in words)
    try:
        expected = [node.tag for node in yaml.compose(text, Loader=yaml.CSafeLoader).value]  # type: ignore[union-attr]
    except (yaml.YAMLError, AttributeError):
        return  # not a plain sequence of scalars
    original = yamlpos._PLAIN_TAGS, yamlpos._PLAIN_TAGS_HELD
    yamlpos._PLAIN_TAGS, yamlpos._PLAIN_TAGS_HELD = {}, held
    try:
        for _ in range(2):  # the second time, from what the first remembered
            documents = load_all(SourceFile.from_text(text))
            assert [node.tag for node in documents[0].items] == expected
            assert len(yamlpos._PLAIN_TAGS) <= held
    finally:
        yamlpos._PLAIN_TAGS, yamlpos._PLAIN_TAGS_HELD = original


def test_a_plain_scalar_maps_its_characters_by_a_range_and_its_words_span_as_written() -> None:
    from mtplint.source import Token

    source = SourceFile.from_text("services:\n  vllm:\n    command: vllm serve --port 8000\n")
    command = load(source).get("services").get("vllm").get("command")  # type: ignore[union-attr]
    text = command.text
    assert text is not None
    # no list of offsets per scalar: a text read as written is a range, as is each word cut from it
    assert isinstance(text.offsets, range)
    start = source.text.index("vllm serve")
    word = text.slice(5, 10)
    assert isinstance(word.offsets, range)
    token = Token.from_mapped(word)
    assert (token.value, token.span.start, token.span.end, token.span.line, token.span.column) == (
        "serve", start + 5, start + 10, 3, 19)


def test_only_a_repeated_scalar_key_is_dead_whatever_the_other_keys() -> None:
    from mtplint.extract.yamlpos import duplicate_keys

    # two collection keys (no text) and distinct scalar keys: no key is dead, every pair is kept
    source = SourceFile.from_text("? [a]\n: 1\n? [b]\n: 2\nc: 3\n")
    assert duplicate_keys(source) == []
    assert [key.kind for key, _ in load(source).pairs] == ["seq", "seq", "scalar"]  # type: ignore[union-attr]
    # a scalar key given twice: the first is dead, the collection keys stay
    text = "? [a]\n: 1\nc: 2\n? [b]\n: 3\nc: 4\n"
    again = SourceFile.from_text(text)
    dead = duplicate_keys(again)
    assert [(first.start, last.start) for first, last in dead] == [(text.index("c: 2"), text.index("c: 4"))]
    assert [(key.kind, value.str) for key, value in load(again).pairs] == [  # type: ignore[union-attr]
        ("seq", "1"), ("seq", "3"), ("scalar", "4")]
