"""A compose service built from a Dockerfile (``build: .``, ``build: {context, dockerfile}``).

``docker compose`` builds such a service from the Dockerfile at ``context/dockerfile`` (default
``Dockerfile``; a relative ``dockerfile`` is read from the context, compose spec "build"), passes
``build.args`` as ``--build-arg`` and stops at ``build.target`` (default: the last stage). The
container then runs that stage's ENTRYPOINT/CMD unless the service sets ``entrypoint``/``command``,
and a stage without ENTRYPOINT keeps its base image's one.

What a launch learns from it: the base image (``FROM``, through earlier stages and ``ARG``
defaults, which ``build.args`` override) -- an engine image whose tag may name the version -- and
``pip install vllm==...`` / ``uv pip install "sglang[all]>=0.5.9"`` pins in the stages' ``RUN``
lines, with the variables in scope substituted, and in the build context's requirements files.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from mtplint.extract import ExtractContext, Malformed
from mtplint.extract.dockerfile import Command, Stage, stages
from mtplint.extract.launch import VersionHint
from mtplint.pathtext import join
from mtplint.records import Record
from mtplint.source import MappedText, SourceFile, Token
from mtplint.versions import pins_in_directory, pins_in_text


class BuiltImage(Record):
    """The image a service's ``build`` produces, as far as a launch needs it."""

    __slots__ = ("dockerfile", "stage", "pins")
    dockerfile: SourceFile
    #: the stage built (``target``, else the last)
    stage: Stage
    #: version pins in the Dockerfile's RUN lines and the build context's requirements files
    pins: list[VersionHint]

    def __init__(self, dockerfile: SourceFile, stage: Stage, pins: list[VersionHint]) -> None:
        self.dockerfile = dockerfile
        self.stage = stage
        self.pins = pins

    @property
    def base_image(self) -> Token:
        """The image the built stage starts ``FROM`` (an earlier stage's, when built on one)."""
        return self.stage.image


def built_image(context_dir: str, dockerfile: str, build_args: Mapping[str, Token], target: str | None,
                ctx: ExtractContext, compose_dir: str) -> BuiltImage | None:
    """Read the Dockerfile a ``build`` section names; None when it is absent or unreadable.
    ``compose_dir``: the compose file's folder, whose pin files (and its parents') every launch of
    the file gets already (:func:`mtplint.versions.pins_near`)."""
    source = ctx.loader.load(join(context_dir, dockerfile))  # an absolute path as it is
    if source is None:
        return None
    try:
        all_stages = stages(source, build_args)
    except Malformed:
        return None  # the Dockerfile's own extraction reports it (MTP001)
    if not all_stages:
        return None
    chosen = all_stages[-1]
    if target:
        chosen = next((stage for stage in all_stages if stage.name and stage.name.lower() == target.lower()), chosen)
    # a variable with no known value stays `${NAME}` in a RUN line, which no pin's version matches
    pins = [VersionHint(hint.engine, hint.spec, "pin", run.span)  # the expanded text has no positions of its own
            for stage in all_stages for run in stage.runs for hint in pins_in_text(run.value)]
    context, near = os.path.abspath(context_dir), os.path.abspath(compose_dir)
    if not (near == context or near.startswith(context.rstrip(os.sep) + os.sep)):
        pins.extend(pins_in_directory(context_dir, ctx.loader.load))
    return BuiltImage(source, chosen, pins)


def stage_words(command: Command | None) -> list[tuple[Token, MappedText]] | None:
    """A stage's ENTRYPOINT or CMD as the words docker runs (shell form: ``/bin/sh -c TEXT``), each
    as the Dockerfile's own extraction reads it (so both report a finding at the same place)."""
    if command is None:
        return None
    if command.words is not None:
        return list(command.words)
    assert command.shell is not None
    shell = command.shell
    at = shell.offsets[0] if shell.offsets else 0
    return [(token, MappedText.synthetic(token.value, shell.source, at) if index < 2 else shell)
            for index, token in enumerate(command.argv())]
