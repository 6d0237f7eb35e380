"""Kubernetes manifests: every server container of every workload, as a launch.

Reads plain manifests, ``kubectl``-style ``List`` documents and Helm-rendered streams (``---``
separated documents with ``# Source:`` comments). :mod:`mtplint.extract.kustomize` builds the
patched workloads of a kustomization on this module and comes back here for the containers;
:mod:`mtplint.extract.kubernetes` hands a file to one or the other.

Kubernetes semantics encoded here (Kubernetes API reference, ``Container`` v1):

- ``command`` replaces the image ENTRYPOINT and ``args`` replaces its CMD; ``args`` alone run the
  image's own entrypoint with these arguments (:func:`mtplint.extract.launch.entry_for_image`).
- ``$(VAR)`` in ``command``/``args``/``env[].value`` expands from the container's environment;
  ``$$`` is an escaped ``$``; a reference to an undefined variable stays as written (kubelet's
  ``third_party/forked/golang/expansion/expand.go``: ``Expand`` / ``tryReadVariableName`` /
  ``syntaxWrap``). An ``env`` value sees only the variables defined before it (envFrom first, then
  earlier ``env`` entries); ``command``/``args`` see all of them.
- ``envFrom`` sources come first, ``env`` entries override them (kubelet
  ``makeEnvironmentVariables``).
- ``initContainers`` run to completion before the pod's containers start, so they are not servers
  and are skipped; the exception is a *native sidecar* (an init container with
  ``restartPolicy: Always``, Kubernetes >= 1.28), which runs for the pod's whole life.
- GPU count from ``resources.limits`` (else ``requests``) ``nvidia.com/gpu`` / ``amd.com/gpu``; GPU
  model only from node labels the scheduler enforces: ``nodeSelector`` or required node affinity on
  ``nvidia.com/gpu.product`` (GPU feature discovery) or ``cloud.google.com/gke-accelerator``
  (docs/gpus.md#names). Preferred affinity is a wish, not a guarantee: ignored.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

from mtplint.extract import ExtractContext, FileLoader, build_launch
from mtplint.extract.budget import ExpansionBudget, is_over_budget, over_budget
from mtplint.extract.launch import GpuHint, Launch, Recognised, entry_for_image, image_entry, recognise
from mtplint.extract.yamlpos import YNode, scalar_text
from mtplint.pathtext import join
from mtplint.records import Record
from mtplint.source import EnvEntry, MappedText, SourceFile, Span, Token

#: where each workload kind keeps its pod spec(s): (path, role shown in the context label)
POD_SPEC_PATHS: dict[str, tuple[tuple[tuple[str, ...], str], ...]] = {
    "Pod": ((("spec",), ""),),
    "Deployment": ((("spec", "template", "spec"), ""),),
    "StatefulSet": ((("spec", "template", "spec"), ""),),
    "DaemonSet": ((("spec", "template", "spec"), ""),),
    "ReplicaSet": ((("spec", "template", "spec"), ""),),
    "ReplicationController": ((("spec", "template", "spec"), ""),),
    "Job": ((("spec", "template", "spec"), ""),),
    "CronJob": ((("spec", "jobTemplate", "spec", "template", "spec"), ""),),
    "PodTemplate": ((("template", "spec"), ""),),
    # LeaderWorkerSet (sigs.k8s.io/lws), the usual way to run multi-node vLLM/SGLang
    "LeaderWorkerSet": (
        (("spec", "leaderWorkerTemplate", "leaderTemplate", "spec"), "leader"),
        (("spec", "leaderWorkerTemplate", "workerTemplate", "spec"), "worker"),
    ),
}
#: other kinds (Argo Rollout, Knative Service, OpenKruise CloneSet, ...) are read when they hold a
#: pod template at the usual place
GENERIC_POD_SPEC = ("spec", "template", "spec")

GPU_RESOURCES = ("nvidia.com/gpu", "amd.com/gpu")
GPU_PRODUCT_LABELS = ("nvidia.com/gpu.product", "cloud.google.com/gke-accelerator")
SHELLS = ("sh", "bash", "dash", "ash", "zsh", "ksh")
KUSTOMIZATION_KEYS = ("resources", "bases", "patches", "patchesStrategicMerge", "patchesJson6902", "components")
KUSTOMIZATION_FILES = ("kustomization.yaml", "kustomization.yml", "Kustomization")

_HELM_SOURCE = re.compile(r"^#\s*Source:\s*(\S.*?)\s*$", re.MULTILINE)


# --- document shapes ----------------------------------------------------------------------------


def is_manifest(document: YNode) -> bool:
    return (document.is_map and scalar_text(document.get("apiVersion")) is not None
            and scalar_text(document.get("kind")) is not None)


def is_kustomization(document: YNode) -> bool:
    """A ``kustomization.yaml``: ``kind: Kustomization``/``Component``, or (as kustomize allows) no
    apiVersion/kind at all but a list of resources or patches."""
    if not document.is_map:
        return False
    kind = scalar_text(document.get("kind"))
    if kind in ("Kustomization", "Component"):
        return True
    if kind is not None or document.get("apiVersion") is not None:
        return False
    return any((value := document.get(key)) is not None and value.is_seq for key in KUSTOMIZATION_KEYS)


def claims(documents: list[YNode]) -> bool:
    return any(is_manifest(document) or is_kustomization(document) for document in documents)


def find_kustomization(directory: str, loader: FileLoader) -> str | None:
    """The path of the kustomization file in ``directory``, if it holds one."""
    name = loader.first_file(directory, KUSTOMIZATION_FILES)
    return None if name is None else join(directory, name)


def path_of(node: YNode | None, path: tuple[str, ...]) -> YNode | None:
    for key in path:
        if node is None or not node.is_map:
            return None
        node = node.get(key)
    return node


class Workload(Record):
    """One manifest that runs pods."""

    __slots__ = ("kind", "name", "document", "helm_source")
    kind: str
    name: str
    document: YNode
    helm_source: str | None

    def __init__(self, kind: str, name: str, document: YNode, helm_source: str | None = None) -> None:
        self.kind = kind
        self.name = name
        self.document = document
        self.helm_source = helm_source


def manifests(documents: list[YNode]) -> Iterator[YNode]:
    """Every manifest of a stream, with the items of ``List`` documents flattened."""
    for document in documents:
        if not is_manifest(document):
            continue
        kind = scalar_text(document.get("kind")) or ""
        items = document.get("items")
        if (kind == "List" or kind.endswith("List")) and items is not None and items.is_seq:
            yield from (item for item in items.items if is_manifest(item))
        else:
            yield document


def pod_specs(document: YNode) -> list[tuple[YNode, str]]:
    kind = scalar_text(document.get("kind")) or ""
    found: list[tuple[YNode, str]] = []
    for path, role in POD_SPEC_PATHS.get(kind, ((GENERIC_POD_SPEC, ""),)):
        spec = path_of(document, path)
        if spec is not None and spec.is_map and spec.get("containers") is not None:
            found.append((spec, role))
    return found


def _helm_source(source: SourceFile, document: YNode) -> str | None:
    """The ``# Source: chart/templates/x.yaml`` comment Helm writes above a rendered document."""
    separator = source.text.rfind("\n---", 0, document.start)
    region = source.text[separator + 1 if separator >= 0 else 0:document.start]
    matches = _HELM_SOURCE.findall(region)
    return matches[-1] if matches else None


def workloads(source: SourceFile, documents: list[YNode]) -> list[Workload]:
    found: list[Workload] = []
    for document in manifests(documents):
        if not pod_specs(document):
            continue
        kind = scalar_text(document.get("kind")) or ""
        name = scalar_text(path_of(document, ("metadata", "name"))) or "?"
        found.append(Workload(kind, name, document, _helm_source(source, document)))
    return found


# --- ConfigMaps and the environment -------------------------------------------------------------

ConfigMaps = dict[str, dict[str, Token]]


def config_maps(documents: list[YNode]) -> ConfigMaps:
    """``data`` of every ConfigMap in the stream, by name (``envFrom.configMapRef`` resolves here)."""
    found: ConfigMaps = {}
    for document in manifests(documents):
        if scalar_text(document.get("kind")) != "ConfigMap":
            continue
        name = scalar_text(path_of(document, ("metadata", "name")))
        data = document.get("data")
        if name is None or data is None or not data.is_map:
            continue
        found[name] = {key: Token.from_mapped(value.text) for key, _, value in data.entries()
                       if value.is_scalar and value.text is not None}
    return found


class ContainerEnv(Record):
    """A container's environment as far as the manifest tells it."""

    __slots__ = ("entries", "unknown_sources", "budget")
    entries: dict[str, EnvEntry]
    #: ``envFrom`` sources whose names are unknown (a Secret, a ConfigMap outside the stream)
    unknown_sources: list[str]
    #: what ``$(VAR)`` expansion may still produce (the file's: :mod:`mtplint.extract.budget`)
    budget: ExpansionBudget

    def __init__(self, entries: dict[str, EnvEntry] | None = None, unknown_sources: list[str] | None = None,
                 budget: ExpansionBudget | None = None) -> None:
        self.entries = entries if entries is not None else {}
        self.unknown_sources = unknown_sources if unknown_sources is not None else []
        self.budget = budget if budget is not None else ExpansionBudget()

    def lookup(self, name: str) -> Token | None:
        entry = self.entries.get(name)
        return entry.value if entry is not None else None


def expand(text: MappedText, lookup: Callable[[str], Token | None], open_ended: bool,
           mark_unknown: bool = True, budget: ExpansionBudget | None = None) -> tuple[MappedText, list[str]]:
    """Kubernetes ``$(VAR)`` expansion of ``text``, keeping positions.

    Follows kubelet's expansion.Expand: ``$$`` -> ``$``; ``$(NAME)`` -> the variable's value when it
    is defined; an undefined reference, an unterminated ``$(`` and ``$x`` stay as written. Returns
    the text and the references that could not be resolved: a variable whose value is unknown
    (``valueFrom``), or, with ``mark_unknown``, an undefined one (it may come from an ``envFrom``
    source we cannot read, or the user expected a value that will not be there). A value that would
    take ``budget`` past its end is left as written and unresolved.
    """
    raw = text.text
    if "$" not in raw:
        return text, []
    parts: list[MappedText] = []
    unresolved: list[str] = []
    checkpoint = 0
    cursor = 0
    while cursor < len(raw):
        if raw[cursor] != "$" or cursor + 1 >= len(raw):
            cursor += 1
            continue
        parts.append(text.slice(checkpoint, cursor))
        following = raw[cursor + 1]
        if following == "$":
            parts.append(text.slice(cursor, cursor + 1))
            cursor += 2
        elif following == "(" and (closer := raw.find(")", cursor + 2)) >= 0:
            name = raw[cursor + 2:closer]
            value = lookup(name)
            if value is not None and value.resolved and budget is not None and not budget.take(len(value.value)):
                parts.append(text.slice(cursor, closer + 1))
                unresolved.append(over_budget(f"$({name})"))
            elif value is not None and value.resolved:
                at = text.offsets[cursor]
                parts.append(MappedText.synthetic(value.value, text.source, at))
            else:
                parts.append(text.slice(cursor, closer + 1))
                if value is not None and any(map(is_over_budget, value.unresolved)):
                    unresolved.append(over_budget(f"$({name})"))  # (so that MTP003 says why)
                elif value is not None or mark_unknown or open_ended:
                    unresolved.append(f"$({name})")
            cursor = closer + 1
        else:
            parts.append(text.slice(cursor, cursor + 2))
            cursor += 2
        checkpoint = cursor
    parts.append(text.slice(checkpoint))
    return MappedText.join(parts), unresolved


def container_env(container: YNode, configmaps: ConfigMaps, notes: list[str],
                  budget: ExpansionBudget | None = None) -> ContainerEnv:
    env = ContainerEnv(budget=budget)
    env_from = container.get("envFrom")
    for source_node in env_from.items if env_from is not None and env_from.is_seq else []:
        if not source_node.is_map:
            continue
        prefix = scalar_text(source_node.get("prefix")) or ""
        config_ref = scalar_text(path_of(source_node, ("configMapRef", "name")))
        secret_ref = scalar_text(path_of(source_node, ("secretRef", "name")))
        if config_ref is not None and config_ref in configmaps:
            for key, value in configmaps[config_ref].items():
                env.entries[prefix + key] = EnvEntry(prefix + key, value, value.span)
        else:
            label = f"configMap {config_ref}" if config_ref is not None else f"secret {secret_ref or '?'}"
            env.unknown_sources.append(label)
            notes.append(f"envFrom {label}: its variables are not known")
    env_list = container.get("env")
    for item in env_list.items if env_list is not None and env_list.is_seq else []:
        name = scalar_text(item.get("name")) if item.is_map else None
        if name is None:
            continue
        name_node = item.get("name")
        span = name_node.span() if name_node is not None else item.span()
        value_node = item.get("value")
        if value_node is not None and value_node.is_scalar and value_node.text is not None:
            expanded, unresolved = expand(value_node.text, env.lookup, bool(env.unknown_sources), mark_unknown=False,
                                          budget=env.budget)
            token = Token(expanded.text, value_node.span(), tuple(unresolved))
        elif item.get("valueFrom") is not None:
            value_from = item.get("valueFrom")
            assert value_from is not None
            token = Token(name, value_from.span(), (f"valueFrom of {name}",))
        else:
            token = Token("", span)  # `- name: X` alone sets X to the empty string
        env.entries[name] = EnvEntry(name, token, span)
    return env


# --- hardware -----------------------------------------------------------------------------------

def _gpu_count(container: YNode) -> tuple[int, Span] | None:
    for section in ("limits", "requests"):
        resources = path_of(container, ("resources", section))
        if resources is None or not resources.is_map:
            continue
        for resource in GPU_RESOURCES:
            value = resources.get(resource)
            text = scalar_text(value)
            if value is not None and text is not None and text.strip().isdigit():
                return int(text.strip()), value.span()
    return None


def _gpu_product(pod_spec: YNode) -> tuple[str, Span] | None:
    selector = pod_spec.get("nodeSelector")
    if selector is not None and selector.is_map:
        for label in GPU_PRODUCT_LABELS:
            value = selector.get(label)
            text = scalar_text(value)
            if value is not None and text:
                return text, value.span()
    terms = path_of(pod_spec, ("affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution",
                               "nodeSelectorTerms"))
    if terms is None or not terms.is_seq:
        return None
    # terms are ORed: the product is known only when every term pins the same single value
    products: list[tuple[str, Span]] = []
    for term in terms.items:
        expressions = term.get("matchExpressions") if term.is_map else None
        pinned: tuple[str, Span] | None = None
        for expression in expressions.items if expressions is not None and expressions.is_seq else []:
            if not expression.is_map or scalar_text(expression.get("key")) not in GPU_PRODUCT_LABELS:
                continue
            values = expression.get("values")
            if scalar_text(expression.get("operator")) == "In" and values is not None and values.is_seq \
                    and len(values.items) == 1 and scalar_text(values.items[0]):
                pinned = (scalar_text(values.items[0]) or "", values.items[0].span())
        if pinned is None:
            return None
        products.append(pinned)
    if products and len({product for product, _ in products}) == 1:
        return products[0]
    return None


def gpu_hint(container: YNode, pod_spec: YNode) -> GpuHint | None:
    count = _gpu_count(container)
    product = _gpu_product(pod_spec)
    if count is None and product is None:
        return None
    span = product[1] if product is not None else count[1] if count is not None else None
    return GpuHint(product=product[0] if product else None, count=count[0] if count else None, span=span)


# --- containers ---------------------------------------------------------------------------------

def _word_list(node: YNode | None) -> list[MappedText] | None:
    """``command``/``args`` as positioned words (``None`` when absent or not a list of scalars)."""
    if node is None or node.is_null or not node.is_seq:
        return None
    words: list[MappedText] = []
    for item in node.items:
        if not item.is_scalar or item.text is None:
            return None
        words.append(item.text)
    return words


def shell_script(words: list[MappedText]) -> tuple[MappedText, int] | None:
    """The script of ``sh -c SCRIPT`` (also ``bash -lc``, ``/bin/sh -ec``, ``bash -x -c``) and the
    index of the script word; ``None`` for anything else."""
    if not words or words[0].text.rsplit("/", 1)[-1] not in SHELLS:
        return None
    index = 1
    while index < len(words) and words[index].text.startswith("-") and len(words[index].text) > 1:
        option = words[index].text
        index += 1
        if option.startswith("-") and not option.startswith("--") and "c" in option[1:]:
            return (words[index], index) if index < len(words) else None
        if option in ("-o", "+o"):
            index += 1
    return None


def _tokens(words: list[MappedText], env: ContainerEnv) -> list[Token]:
    tokens: list[Token] = []
    for word in words:
        expanded, unresolved = expand(word, env.lookup, bool(env.unknown_sources), budget=env.budget)
        tokens.append(Token(expanded.text, word.span(), tuple(unresolved)))
    return tokens


def _script_launches(script: MappedText, env: ContainerEnv, image: Token | None, *, source: SourceFile,
                     ctx: ExtractContext, base_dir: str, context: str, gpu: GpuHint | None,
                     notes: list[str]) -> list[Launch]:
    from mtplint.extract.shell.launches import script_commands  # noqa: PLC0415 - the shell interpreter: only a script

    # kubelet expands $(VAR) before the shell sees the script; an undefined $(...) is left for the
    # shell, which runs it as a command substitution
    expanded, _ = expand(script, env.lookup, bool(env.unknown_sources), mark_unknown=False, budget=env.budget)
    launches: list[Launch] = []
    for command in script_commands(expanded, dict(env.entries), base_dir):
        recognised = recognise(command.argv)
        if recognised is None:
            continue
        if image is not None:
            recognised.image = recognised.image or image
        launch = build_launch(recognised, source, base_dir=base_dir, context=context, env=command.env, gpu=gpu,
                              span=command.span)
        launch.notes.extend(notes)
        launches.append(launch)
    return launches


def container_launches(container: YNode, pod_spec: YNode, *, label: str, configmaps: ConfigMaps,
                       source: SourceFile, ctx: ExtractContext, base_dir: str, span: Span | None = None,
                       notes: list[str] | None = None) -> list[Launch]:
    """The launch(es) one container runs: ``label`` is e.g. ``Deployment/qwen``; ``span`` overrides
    where the launch is reported (kustomize reports at the patch that produced it)."""
    name = scalar_text(container.get("name")) or "?"
    context = f"{label} container {name}"
    notes = list(notes or [])
    env = container_env(container, configmaps, notes, ctx.budget)
    image_node = container.get("image")
    image = Token.from_mapped(image_node.text) if image_node is not None and image_node.is_scalar \
        and image_node.text is not None and image_node.str else None
    command = _word_list(container.get("command"))
    args = _word_list(container.get("args"))
    gpu = gpu_hint(container, pod_spec)
    launch_span = span or container.span()

    # the words the container runs: command replaces ENTRYPOINT; args alone follow the image's own
    words = [*(command or []), *(args or [])] if command is not None else (args or [])
    script = shell_script(words) if command is not None or image is None or image_entry(image.value) is None else None
    if script is not None:
        if script[1] + 1 < len(words):
            notes.append("arguments after the `sh -c` script become $0, $1, ...: not followed")
        return _script_launches(script[0], env, image, source=source, ctx=ctx, base_dir=base_dir, context=context,
                                gpu=gpu, notes=notes)

    tokens = _tokens(words, env)
    recognised: Recognised | None
    if command is not None or image is None:
        recognised = recognise(tokens)
        if recognised is not None and image is not None:
            recognised.image = image
    else:
        recognised = entry_for_image(image, tokens)
    if recognised is None:
        return []
    launch = build_launch(recognised, source, base_dir=base_dir, context=context, env=dict(env.entries), gpu=gpu,
                          span=launch_span)
    launch.notes.extend(notes)
    return [launch]


def _server_containers(pod_spec: YNode) -> list[YNode]:
    containers = pod_spec.get("containers")
    found = [c for c in containers.items if c.is_map] if containers is not None and containers.is_seq else []
    init = pod_spec.get("initContainers")
    for container in init.items if init is not None and init.is_seq else []:
        if container.is_map and scalar_text(container.get("restartPolicy")) == "Always":
            found.append(container)  # a native sidecar: runs alongside the main containers
    return found


def workload_launches(workload: Workload, configmaps: ConfigMaps, *, source: SourceFile, ctx: ExtractContext,
                      base_dir: str, span: Span | None = None, notes: list[str] | None = None) -> list[Launch]:
    launches: list[Launch] = []
    extra = list(notes or [])
    if workload.helm_source:
        extra.append(f"rendered by Helm from {workload.helm_source}")
    for pod_spec, role in pod_specs(workload.document):
        label = f"{workload.kind}/{workload.name}" + (f" {role}" if role else "")
        for container in _server_containers(pod_spec):
            launches.extend(container_launches(container, pod_spec, label=label, configmaps=configmaps, source=source,
                                               ctx=ctx, base_dir=base_dir, span=span, notes=extra))
    return launches
