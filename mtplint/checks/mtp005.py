"""MTP005 duplicate-yaml-key: a key given twice in one mapping of a YAML file a launch is read
from (a compose file, a Kubernetes manifest, a llama-swap file, a ``--config`` file).

What happens to such a file depends on who reads it: Docker Compose refuses it (compose-go:
``mapping key "command" already defined at line 4``, checked with Docker Compose v2.40.3), kubectl
refuses it since about 1.21 (k8up-io/k8up#452, kubectl 1.21.1; 1.15 kept the last value,
kubernetes/kubernetes#89303), and vLLM reads ``--config`` with PyYAML's ``safe_load`` (0.30.0
utils/argparse_utils.py L583) and SGLang too (0.5.9 srt/server_args_config_parser.py L117); PyYAML
keeps the last value and drops the others without a word.
"""

from __future__ import annotations

from collections.abc import Iterator

from mtplint.checks import Finding, RuleContext
from mtplint.discover import classify
from mtplint.pathtext import normalized, path_name, path_suffix
from mtplint.source import SourceFile

#: what YAML readers read: vLLM and SGLang refuse a ``--config`` file with another suffix
_YAML_SUFFIXES = (".yaml", ".yml")


def _yaml_sources(ctx: RuleContext) -> Iterator[tuple[SourceFile, str]]:
    """The launch's own file and the files its settings were read from, when they are YAML, each
    with who reads it: ``compose``, ``kubernetes``, ``config`` (PyYAML) or ``other``."""
    report = ctx.report
    launch = report.launch
    if path_suffix(launch.source.path).lower() in _YAML_SUFFIXES:
        context = launch.context
        reader = ("compose" if context.startswith("service ") else "kubernetes" if " container " in context
                  else "other")
        yield launch.source, reader
    # a file a setting came from: a --config file the engine read, or the compose file that starts
    # a script (its environment); each once, in the order the settings name them. Most settings are
    # the launch's own words (or defaults): the files are gathered first, by comprehensions
    files = dict.fromkeys([setting.span.file for setting in report.effective.values() if setting.span is not None])
    files.update(dict.fromkeys([option.span.file for option in report.parsed.options.values()
                                if option.span is not None]))
    files.pop(launch.source.display, None)
    if not files:
        return
    config_names = {path_name(normalized(name)) for name in report.parsed.config_files}
    for file in files:
        source = ctx.source_named(file)
        if source is None or path_suffix(source.path).lower() not in _YAML_SUFFIXES:
            continue
        if classify(source.path) == "compose":
            yield source, "compose"
        else:
            yield source, "config" if path_name(source.path) in config_names else "other"


def _consequence(reader: str, engine: str) -> tuple[str, str]:
    """(what the duplicate does, the finding's severity) for a file read by ``reader``."""
    if reader == "compose":
        return ("Docker Compose refuses the file (\"mapping key already defined\"), so none of its services "
                "start; delete one of them"), "error"
    if reader == "kubernetes":
        return ("kubectl refuses the manifest (\"mapping key already defined\", kubectl 1.21 and later; older "
                "releases kept the last value); delete one of them"), "error"
    if reader == "config":
        reads = {"vllm": "vLLM", "sglang": "SGLang"}.get(engine, engine)
        return (f"{reads} reads `--config` with PyYAML, which keeps the last value: this one is never read; "
                "delete the one you do not mean"), "warning"
    return ("YAML readers disagree on such a file (PyYAML keeps the last value, Go's YAML readers refuse the "
            "file); delete one of them"), "warning"


def check(ctx: RuleContext) -> Iterator[Finding]:
    sources = list(_yaml_sources(ctx))
    if not sources:
        return  # a launch in a shell script or a Dockerfile: no YAML reader to load
    from mtplint.extract.yamlpos import YamlError, duplicate_keys  # noqa: PLC0415 - PyYAML's reader: only for a YAML file's launch

    for source, reader in sources:
        try:
            duplicates = duplicate_keys(source)
        except YamlError:
            continue  # MTP001 says why the file cannot be read
        if not duplicates:
            continue
        consequence, severity = _consequence(reader, ctx.engine)
        for dead, again in duplicates:
            yield ctx.report_finding(
                f"`{dead.str}` is given twice in this mapping (again on line {again.span().line}): {consequence}",
                dead.span(), severity=severity,
            )
