"""Image tags, Python programs and environment names are read with string methods, not regular
expressions (compiled at import or on first use, they cost a one-file run a quarter of a
millisecond). On any text they give what the patterns gave."""

from __future__ import annotations

import re

from hypothesis import example, given, settings
from hypothesis import strategies as st

from mtplint.extract import launch

#: the patterns the string methods replace, as they were written
_BUILD = re.compile(r"(?:^|[-_])b(\d{3,6})(?:$|[-_])")
_RELEASE = re.compile(r"^v?(\d+\.\d+(?:\.\d+)?(?:\.post\d+|rc\d+)?)(?:$|[-_+])")
_PYTHON = re.compile(r"^(?:.*/)?python(?:3(?:\.\d+)?)?$")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ENV_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_VLLM_IMAGE = re.compile(r"(vllm/)?vllm-openai(-rocm|-cpu)?")

# digits other than ASCII: `\d` and str.isdecimal() take Arabic-Indic ones, neither takes a superscript
_TAG_PIECES = st.sampled_from(["v", "b", "0", "1", "12", "345", "9180", "٣", "²", ".", "post", "rc", "-", "_", "+",
                               "\n", "x", "server", "cu129"])
_PROGRAM_PIECES = st.sampled_from(["python", "3", ".", "11", "/", "usr/bin/", "\n", "٣", "²", "x", "-m"])
_NAME_PIECES = st.sampled_from(["A", "z", "_", "0", "9", "=", "é", "-", " ", "\n", "ǅ"])


def _old_image_version(image: str) -> str | None:
    _, tag = launch._image_name(image)
    if not tag:
        return None
    build = _BUILD.search(tag)
    if build:
        return f"b{build.group(1)}"
    match = _RELEASE.match(tag)
    return match.group(1) if match else None


@settings(max_examples=600, deadline=None)
@given(tag=st.lists(_TAG_PIECES, max_size=10).map("".join))
@example(tag="b123\n")
@example(tag="x-b1234567")
@example(tag="v1.2\n")
@example(tag="1.2\nx")
@example(tag="1.2.3.4-b")
def test_image_version_reads_a_tag_as_the_patterns_did(tag: str) -> None:
    image = f"vllm/vllm-openai:{tag}"
    assert launch.image_version(image) == _old_image_version(image)


def test_image_version_of_common_tags() -> None:
    tags = {"v0.11.0": "0.11.0", "v0.5.9-cu129": "0.5.9", "server-b9180": "b9180", "0.6.3.post1": "0.6.3.post1",
            "v0.10.1rc1": "0.10.1rc1", "latest": None, "b12": None, "1.2.3.4": None, "v0.11.0+cu": "0.11.0"}
    for tag, version in tags.items():
        assert launch.image_version(f"image:{tag}") == version == _old_image_version(f"image:{tag}")


@settings(max_examples=400, deadline=None)
@given(program=st.lists(_PROGRAM_PIECES, max_size=8).map("".join))
@example(program="/usr/bin/python3.11\n")
@example(program="python\n\n")
@example(program="x\n/python")
def test_a_python_program_is_what_the_pattern_matched(program: str) -> None:
    assert launch._is_python(program) == bool(_PYTHON.match(program))


@settings(max_examples=400, deadline=None)
@given(word=st.lists(_NAME_PIECES, max_size=6).map("".join))
@example(word="é=1")
@example(word="A\n")
def test_an_environment_name_is_what_the_patterns_matched(word: str) -> None:
    assert launch._is_env_name(word) == bool(_ENV_NAME.fullmatch(word))
    key, equals, _ = word.partition("=")
    assert bool(equals and launch._is_env_name(key)) == bool(_ENV_ASSIGNMENT.match(word))


@settings(max_examples=200, deadline=None)
@given(owner=st.sampled_from(["", "vllm/", "docker.io/vllm/", "rocm/", "Vllm/", "vllm/vllm/"]),
       name=st.sampled_from(["vllm-openai", "vllm-openai-rocm", "vllm-openai-cpu", "vllm-openai-tpu", "VLLM-OpenAI",
                             "vllm-openai\n", "vllm"]),
       tag=st.sampled_from(["", ":v0.11.0", ":latest"]))
def test_a_vllm_image_is_what_the_pattern_matched(owner: str, name: str, tag: str) -> None:
    image = f"{owner}{name}{tag}"
    lowered, _ = launch._image_name(image)
    matched = bool(_VLLM_IMAGE.fullmatch(lowered)) or lowered.endswith("/vllm-openai")
    entry = launch.image_entry(image)
    assert (entry is not None and entry.engine == "vllm") == matched
