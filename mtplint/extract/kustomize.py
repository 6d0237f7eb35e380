"""Kustomize: the launches a kustomization produces once its patches are applied.

A ``kustomization.yaml`` is built the way ``kustomize build`` would, for the parts that decide a
server's command line: resources are read, then (kustomize's own transformer order,
``api/internal/target/kusttarget_configplugin.go``) ``patchesStrategicMerge``, ``patches``,
``patchesJson6902`` and ``images`` are applied. The kustomization reports a launch for every
workload that *its own* patches (or components, or image overrides) touched, located at the entry
that touched it last; tokens keep their spans in whichever file they come from (the base manifest,
the patch file, or the inline patch inside the kustomization). Workloads it does not touch are
reported by their own files, so a plain ``resources:`` list does not duplicate them.

Supported:
- ``resources``/``bases``: manifest files and directories holding a kustomization (recursively);
  ``components`` (their patches apply here); ``configMapGenerator`` ``literals``/``envs`` (so
  ``envFrom.configMapRef`` resolves).
- strategic merge patches (files or inline), by the patch's own kind/name or a ``target``: maps
  merge, ``null`` deletes a key, lists of containers/env/volumes/ports/volumeMounts merge by their
  Kubernetes merge key, other lists (``args``, ``command``) are replaced; ``$patch: delete`` /
  ``$patch: replace``. Merged lists keep the resource's order and append the patch's new elements,
  whatever order the patch lists them in, as kustomize v5 does through kyaml's ``merge2.Merge``
  (``kyaml/yaml/merge2/merge2.go``: "if present only in the src, it is added to the dest list";
  ``kyaml/yaml/walk/associative_sequence.go``: elements are collected dest first and set in place
  or appended): a later JSON patch's ``containers/1`` is the resource's second container.
- JSON 6902 patches (``patchesJson6902``, or a ``patches`` entry whose patch is a list of
  operations): ``add``, ``replace``, ``remove``, ``copy``, ``move`` (``test`` is assumed to pass),
  JSON pointers with ``~0``/``~1`` escapes and ``-`` for appending.
- ``images``: ``newName``/``newTag``/``digest`` (the engine version comes from the new tag).

Not supported (a note says so where it matters): remote resources (URLs), ``helmCharts``,
``replacements``/``vars``, set-based label selectors, CRD merge keys from OpenAPI schemas,
``secretGenerator`` contents (treated as an unknown secret), ``namePrefix``/``nameSuffix`` in the
context label (targets match the original names, as kustomize does).
"""

from __future__ import annotations

import os
import re

from mtplint.extract import ExtractContext, FileLoader
from mtplint.extract.k8s import (
    GENERIC_POD_SPEC,
    POD_SPEC_PATHS,
    ConfigMaps,
    Workload,
    config_maps,
    find_kustomization,
    is_kustomization,
    is_manifest,
    manifests,
    path_of,
    pod_specs,
    workload_launches,
)
from mtplint.extract.launch import Launch
from mtplint.extract.yamlpos import YamlError, YNode, load_all, scalar_text
from mtplint.pathtext import is_dir, join, parent_dir
from mtplint.records import Record
from mtplint.source import MappedText, SourceFile, Span, Token

MAX_DEPTH = 12
_STR_TAG = "tag:yaml.org,2002:str"

#: list fields merged element-by-element in a strategic merge patch, with their merge key
#: (``patchMergeKey`` in the Kubernetes core/v1 types); every other list is replaced
MERGE_KEYS = {
    "containers": "name", "initContainers": "name", "ephemeralContainers": "name", "env": "name",
    "volumes": "name", "volumeMounts": "mountPath", "volumeDevices": "devicePath", "ports": "containerPort",
    "imagePullSecrets": "name", "hostAliases": "ip", "resourceClaims": "name", "claims": "name",
}


class PatchError(Exception):
    pass


class Resource(Record):
    __slots__ = ("document", "touched_by")
    document: YNode
    #: the entry of the kustomization being built that changed this resource last
    touched_by: Span | None

    def __init__(self, document: YNode, touched_by: Span | None = None) -> None:
        self.document = document
        self.touched_by = touched_by


class Build(Record):
    __slots__ = ("resources", "configmaps", "notes")
    resources: list[Resource]
    configmaps: ConfigMaps
    notes: list[str]

    def __init__(
        self,
        resources: list[Resource] | None = None,
        configmaps: ConfigMaps | None = None,
        notes: list[str] | None = None,
    ) -> None:
        self.resources = resources if resources is not None else []
        self.configmaps = configmaps if configmaps is not None else {}
        self.notes = notes if notes is not None else []


# --- small YAML tree helpers --------------------------------------------------------------------


def _key(name: str, near: YNode) -> YNode:
    text = MappedText.synthetic(name, near.source, near.start)
    return YNode("scalar", _STR_TAG, near.start, near.start, near.source, text=text)


def _map(like: YNode, pairs: list[tuple[YNode, YNode]]) -> YNode:
    return YNode("map", like.tag, like.start, like.end, like.source, pairs=pairs)


def _seq(like: YNode, items: list[YNode]) -> YNode:
    return YNode("seq", like.tag, like.start, like.end, like.source, items=items)


def _with_key(node: YNode, name: str, value: YNode) -> YNode:
    pairs = list(node.pairs)
    for index, (key, _) in enumerate(pairs):
        if key.is_scalar and key.str == name:
            pairs[index] = (key, value)
            return _map(node, pairs)
    pairs.append((_key(name, value), value))
    return _map(node, pairs)


def _without_key(node: YNode, name: str) -> YNode:
    return _map(node, [(key, value) for key, value in node.pairs if not (key.is_scalar and key.str == name)])


def embedded_documents(node: YNode) -> list[YNode]:
    """YAML written inside a string (``patch: |-`` in a kustomization), with positions in the outer file."""
    outer = node.text
    if outer is None:
        return []
    inner = SourceFile(node.source.path, node.source.display, outer.text)
    documents = load_all(inner)
    limit = len(outer.offsets) - 1

    def at(offset: int) -> int:
        return outer.offsets[max(0, min(offset, limit))]

    seen: set[int] = set()
    stack = list(documents)
    while stack:
        current = stack.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        inner_text = current.text  # aligned with the inner text before the node moves to the outer file
        current.source = node.source
        current.start, current.end = at(current.start), at(current.end)
        if inner_text is not None:
            offsets = inner_text.offsets
            # offsets into the inner text (all of them, as it is aligned) are looked up in C
            moved = list(map(outer.offsets.__getitem__, offsets)) if min(offsets) >= 0 and max(offsets) <= limit \
                else [at(o) for o in offsets]
            current.text = MappedText(inner_text.text, moved, node.source)
        stack.extend(current.items)
        for key, value in current.pairs:
            stack.extend((key, value))
    return documents


# --- strategic merge patch ----------------------------------------------------------------------

def strategic_merge(base: YNode, patch: YNode, field_name: str = "") -> YNode | None:
    """Apply a strategic merge patch node to ``base``; ``None`` means the node is deleted."""
    if base.is_map and patch.is_map:
        directive = scalar_text(patch.get("$patch"))
        if directive == "delete":
            return None
        if directive == "replace":
            return _without_key(patch, "$patch")
        result = base
        for name, _, value in patch.entries():
            if name.startswith("$"):
                continue  # $retainKeys, $setElementOrder/..., $deleteFromPrimitiveList/...: ordering details
            current = result.get(name)
            if value.is_null:
                result = _without_key(result, name)
            elif current is None:
                result = _with_key(result, name, value)
            else:
                merged = strategic_merge(current, value, name)
                result = _without_key(result, name) if merged is None else _with_key(result, name, merged)
        return result
    if base.is_seq and patch.is_seq:
        merge_key = MERGE_KEYS.get(field_name)
        if merge_key is None or not all(item.is_map for item in [*base.items, *patch.items]):
            return patch
        if any(scalar_text(item.get("$patch")) == "replace" for item in patch.items):
            return _seq(patch, [item for item in patch.items if scalar_text(item.get("$patch")) != "replace"])
        items = list(base.items)  # the resource's order; the patch's new elements go at the end
        for item in patch.items:
            key = scalar_text(item.get(merge_key))
            position = next((i for i, existing in enumerate(items) if scalar_text(existing.get(merge_key)) == key), None)
            if position is None:
                if scalar_text(item.get("$patch")) != "delete":
                    items.append(item)
                continue
            merged = strategic_merge(items[position], item, "")
            if merged is None:
                del items[position]
            else:
                items[position] = merged
        return _seq(base, items)
    return patch


# --- JSON 6902 ----------------------------------------------------------------------------------

def _pointer(path: str) -> list[str]:
    if path == "":
        return []
    if not path.startswith("/"):
        raise PatchError(f"invalid JSON pointer {path!r}")
    return [part.replace("~1", "/").replace("~0", "~") for part in path[1:].split("/")]


def _get(node: YNode, parts: list[str]) -> YNode:
    for part in parts:
        if node.is_map:
            child = node.get(part)
        elif node.is_seq and part.isdigit() and int(part) < len(node.items):
            child = node.items[int(part)]
        else:
            child = None
        if child is None:
            raise PatchError(f"path /{'/'.join(parts)} not found")
        node = child
    return node


def _apply(node: YNode, op: str, parts: list[str], value: YNode | None) -> YNode:
    if not parts:
        if op in ("add", "replace") and value is not None:
            return value
        raise PatchError(f"cannot {op} the whole document")
    head, rest = parts[0], parts[1:]
    if node.is_map:
        child = node.get(head)
        if rest:
            if child is None:
                raise PatchError(f"path element {head!r} not found")
            return _with_key(node, head, _apply(child, op, rest, value))
        if op == "remove":
            if child is None:
                raise PatchError(f"cannot remove missing {head!r}")
            return _without_key(node, head)
        if op == "replace" and child is None:
            raise PatchError(f"cannot replace missing {head!r}")
        assert value is not None
        return _with_key(node, head, value)
    if node.is_seq:
        items = list(node.items)
        if head == "-" and not rest and op == "add":
            index = len(items)
        elif head.isdigit() and int(head) < len(items) + (1 if op == "add" and not rest else 0):
            index = int(head)
        else:
            raise PatchError(f"index {head!r} out of range")
        if rest:
            items[index] = _apply(items[index], op, rest, value)
        elif op == "add":
            assert value is not None
            items.insert(index, value)
        elif op == "replace":
            assert value is not None
            items[index] = value
        else:
            del items[index]
        return _seq(node, items)
    raise PatchError(f"path element {head!r} is inside a scalar")


def json6902(document: YNode, operations: YNode) -> YNode:
    for operation in operations.items:
        if not operation.is_map:
            raise PatchError("a JSON patch operation must be a mapping")
        op = scalar_text(operation.get("op")) or ""
        parts = _pointer(scalar_text(operation.get("path")) or "")
        if op in ("add", "replace"):
            value = operation.get("value")
            if value is None:
                raise PatchError(f"{op} without a value")
            document = _apply(document, op, parts, value)
        elif op == "remove":
            document = _apply(document, op, parts, None)
        elif op in ("copy", "move"):
            origin = _pointer(scalar_text(operation.get("from")) or "")
            value = _get(document, origin)
            if op == "move":
                document = _apply(document, "remove", origin, None)
            document = _apply(document, "add", parts, value)
        elif op != "test":
            raise PatchError(f"unknown JSON patch operation {op!r}")
    return document


def is_json_patch(documents: list[YNode]) -> bool:
    return len(documents) == 1 and documents[0].is_seq and all(
        item.is_map and item.get("op") is not None for item in documents[0].items)


# --- targets ------------------------------------------------------------------------------------

def _labels_match(document: YNode, selector: str) -> bool | None:
    """Equality-based label selectors (``a=b,c!=d``); ``None`` for set-based ones we do not read."""
    labels = path_of(document, ("metadata", "labels"))
    values = {key: node.str for key, _, node in labels.entries()} if labels is not None and labels.is_map else {}
    for requirement in filter(None, (part.strip() for part in selector.split(","))):
        match = re.fullmatch(r"([\w./-]+)\s*(==|=|!=)\s*([\w.-]*)", requirement)
        if match is None:
            return None
        key, operator, wanted = match.groups()
        if (values.get(key) == wanted) != (operator != "!="):
            return False
    return True


#: a patch target's name that, read as a regular expression, matches only itself
_LITERAL_NAME = re.compile(r"[A-Za-z0-9_-]*")


def _target_matches(document: YNode, target: YNode, notes: list[str]) -> bool:
    for field_name, path in (("kind", ("kind",)), ("namespace", ("metadata", "namespace"))):
        wanted = scalar_text(target.get(field_name))
        if wanted is not None and wanted != (scalar_text(path_of(document, path)) or ""):
            if field_name == "namespace" and scalar_text(path_of(document, path)) is None:
                continue  # namespace set later by the overlay: kustomize matches the unset one too
            return False
    name = scalar_text(target.get("name"))
    actual = scalar_text(path_of(document, ("metadata", "name"))) or ""
    if name is not None and _LITERAL_NAME.fullmatch(name):
        # a name with no regex syntax (most): matches itself only, with no pattern to compile
        if name != actual:
            return False
    elif name is not None:
        try:
            if re.fullmatch(name, actual) is None:
                return False
        except re.error:
            if name != actual:
                return False
    selector = scalar_text(target.get("labelSelector"))
    if selector is not None:
        matched = _labels_match(document, selector)
        if matched is None:
            notes.append(f"label selector {selector!r} is not supported; patch not applied")
            return False
        if not matched:
            return False
    if target.get("annotationSelector") is not None:
        notes.append("annotationSelector targets are not supported; patch not applied")
        return False
    return True


def _same_resource(document: YNode, patch: YNode) -> bool:
    return (scalar_text(document.get("kind")) == scalar_text(patch.get("kind"))
            and scalar_text(path_of(document, ("metadata", "name"))) == scalar_text(path_of(patch, ("metadata", "name"))))


# --- building -----------------------------------------------------------------------------------

def _resolve(loader: FileLoader, directory: str, name: str) -> str:
    """``(directory / name).resolve()``. Resolving follows the directory's links before it climbs out
    of it, so a name that starts by climbing (a base's ``../../base``) climbs from the directory's
    real path, which the loader knows, and only the rest of the name is resolved."""
    parts = name.split("/")
    climb = 0
    while climb < len(parts) and parts[climb] == "..":
        climb += 1
    if not climb:
        return loader.resolve(join(directory, name))
    real = loader.real_path(directory)
    for _ in range(climb):
        real = os.path.dirname(real)
    return loader.resolve(join(real, *parts[climb:]))


def _is_remote(entry: str) -> bool:
    return "://" in entry or entry.startswith(("github.com/", "git@", "gitlab.com/", "bitbucket.org/"))


def _is_inline(entry: str) -> bool:
    return "\n" in entry or entry.lstrip().startswith(("apiVersion:", "kind:", "- op:", "[", "{"))


class Builder:
    def __init__(self, ctx: ExtractContext) -> None:
        self.ctx = ctx
        self.active: set[str] = set()

    def _documents(self, path: str, notes: list[str]) -> list[YNode] | None:
        source = self.ctx.loader.load(path)
        if source is None:
            notes.append(f"{self.ctx.loader.display(path)}: not found or not readable")
            return None
        try:
            return load_all(source)
        except YamlError as error:
            self.ctx.malformed(source, str(error), error.offset)
            return None

    def build_directory(self, directory: str, depth: int, notes: list[str]) -> Build | None:
        path = find_kustomization(directory, self.ctx.loader)
        if path is None:
            notes.append(f"{self.ctx.loader.display(directory)}: no kustomization found")
            return None
        documents = self._documents(path, notes)
        if not documents:
            return None
        source = self.ctx.loader.load(path)
        assert source is not None
        return self.build(source, documents[0], depth, notes)

    def build(self, source: SourceFile, kustomization: YNode, depth: int, notes: list[str]) -> Build:
        """Resources of one kustomization with its transformations applied; ``touched_by`` refers to
        this kustomization's own entries only."""
        result = Build(notes=notes)
        loader = self.ctx.loader
        key = loader.resolve(source.path) if loader.exists(source.path) else source.path
        if depth > MAX_DEPTH or key in self.active:
            notes.append(f"{source.display}: kustomization cycle or nesting too deep; not followed")
            return result
        self.active.add(key)
        try:
            directory = parent_dir(source.path)
            for field_name in ("resources", "bases"):
                self._resources(result, directory, kustomization.get(field_name), depth, notes)
            self._generators(result, directory, kustomization, notes)
            components = kustomization.get("components")
            for entry in components.items if components is not None and components.is_seq else []:
                self._component(result, directory, entry, depth, notes)
            self._transform(result, directory, kustomization, notes)
        finally:
            self.active.discard(key)
        return result

    def _resources(self, result: Build, directory: str, entries: YNode | None, depth: int, notes: list[str]) -> None:
        for entry in entries.items if entries is not None and entries.is_seq else []:
            name = scalar_text(entry)
            if name is None:
                continue
            if _is_remote(name):
                notes.append(f"remote resource {name} is not read")
                continue
            path = _resolve(self.ctx.loader, directory, name)
            if is_dir(path):
                inner = self.build_directory(path, depth + 1, notes)
                if inner is not None:
                    result.resources.extend(Resource(resource.document) for resource in inner.resources)
                    result.configmaps.update(inner.configmaps)
                continue
            documents = self._documents(path, notes)
            for document in manifests(documents or []):
                result.resources.append(Resource(document))
                if scalar_text(document.get("kind")) == "ConfigMap":
                    result.configmaps.update(config_maps([document]))

    def _component(self, result: Build, directory: str, entry: YNode, depth: int, notes: list[str]) -> None:
        name = scalar_text(entry)
        if name is None or _is_remote(name):
            return
        path = find_kustomization(_resolve(self.ctx.loader, directory, name), self.ctx.loader)
        documents = self._documents(path, notes) if path is not None else None
        if path is None or not documents:
            notes.append(f"component {name}: no kustomization found")
            return
        component_source = self.ctx.loader.load(path)
        assert component_source is not None
        self._resources(result, parent_dir(path), documents[0].get("resources"), depth + 1, notes)
        self._generators(result, parent_dir(path), documents[0], notes)
        self._transform(result, parent_dir(path), documents[0], notes)

    def _generators(self, result: Build, directory: str, kustomization: YNode, notes: list[str]) -> None:
        generators = kustomization.get("configMapGenerator")
        for generator in generators.items if generators is not None and generators.is_seq else []:
            name = scalar_text(generator.get("name")) if generator.is_map else None
            if name is None:
                continue
            data: dict[str, Token] = {}
            if scalar_text(generator.get("behavior")) == "merge":
                data.update(result.configmaps.get(name, {}))
            literals = generator.get("literals")
            for literal in literals.items if literals is not None and literals.is_seq else []:
                if literal.is_scalar and literal.text is not None and "=" in literal.str:
                    split = literal.str.index("=")
                    data[literal.str[:split]] = Token.from_mapped(literal.text.slice(split + 1))
            envs = generator.get("envs")
            for env_file in envs.items if envs is not None and envs.is_seq else []:
                file_name = scalar_text(env_file)
                env_source = (self.ctx.loader.load(_resolve(self.ctx.loader, directory, file_name)) if file_name
                              else None)
                if env_source is None:
                    notes.append(f"configMapGenerator {name}: env file {file_name} not found")
                    continue
                data.update(_env_file(env_source))
            result.configmaps[name] = data

    def _transform(self, result: Build, directory: str, kustomization: YNode, notes: list[str]) -> None:
        strategic = kustomization.get("patchesStrategicMerge")
        for entry in strategic.items if strategic is not None and strategic.is_seq else []:
            for patch in self._patch_documents(entry, directory, notes):
                self._apply_strategic(result, patch, None, entry.span(), notes)
        patches = kustomization.get("patches")
        for entry in patches.items if patches is not None and patches.is_seq else []:
            self._patches_entry(result, directory, entry, notes)
        json_patches = kustomization.get("patchesJson6902")
        for entry in json_patches.items if json_patches is not None and json_patches.is_seq else []:
            if not entry.is_map or entry.get("target") is None:
                continue
            body = entry.get("patch") if entry.get("patch") is not None else entry.get("path")
            documents = self._patch_documents(body, directory, notes) if body is not None else []
            target = entry.get("target")
            assert target is not None
            if is_json_patch(documents):
                self._apply_json(result, documents[0], target, entry.span(), notes)
        images = kustomization.get("images")
        for entry in images.items if images is not None and images.is_seq else []:
            if entry.is_map:
                self._apply_image(result, entry)

    def _patch_documents(self, entry: YNode, directory: str, notes: list[str]) -> list[YNode]:
        value = scalar_text(entry)
        if value is None:
            return [entry] if entry.is_map else []
        if _is_inline(value):
            try:
                return embedded_documents(entry)
            except YamlError as error:
                offset = entry.text.offsets[min(error.offset, len(entry.text.offsets) - 1)] if entry.text else entry.start
                self.ctx.malformed(entry.source, f"inline patch: {error}", offset)
                return []
        return self._documents(_resolve(self.ctx.loader, directory, value), notes) or []

    def _patches_entry(self, result: Build, directory: str, entry: YNode, notes: list[str]) -> None:
        if not entry.is_map:
            return
        body = entry.get("patch") if entry.get("patch") is not None else entry.get("path")
        if body is None:
            return
        documents = self._patch_documents(body, directory, notes)
        target = entry.get("target")
        if is_json_patch(documents):
            if target is None:
                notes.append("a JSON patch without target is not applied")
                return
            self._apply_json(result, documents[0], target, entry.span(), notes)
            return
        for patch in documents:
            if patch.is_map:
                self._apply_strategic(result, patch, target, entry.span(), notes)

    def _apply_strategic(self, result: Build, patch: YNode, target: YNode | None, span: Span, notes: list[str]) -> None:
        if not is_manifest(patch) and target is None:
            return
        for resource in result.resources:
            document = resource.document
            if not (_target_matches(document, target, notes) if target is not None else _same_resource(document, patch)):
                continue
            # identity fields of the patch never rename the target
            body = _without_key(_without_key(_without_key(patch, "apiVersion"), "kind"), "metadata")
            metadata = patch.get("metadata")
            if metadata is not None and metadata.is_map:
                extra = _without_key(_without_key(_without_key(metadata, "name"), "namespace"), "$patch")
                if extra.pairs:
                    body = _with_key(body, "metadata", extra)
            merged = strategic_merge(document, body)
            if merged is not None:
                resource.document = merged
                resource.touched_by = span

    def _apply_json(self, result: Build, operations: YNode, target: YNode, span: Span, notes: list[str]) -> None:
        for resource in result.resources:
            if not _target_matches(resource.document, target, notes):
                continue
            try:
                resource.document = json6902(resource.document, operations)
            except PatchError as error:
                notes.append(f"JSON patch not applicable: {error}")
                continue
            resource.touched_by = span

    def _apply_image(self, result: Build, entry: YNode) -> None:
        wanted = scalar_text(entry.get("name"))
        new_name, new_tag, digest = entry.get("newName"), entry.get("newTag"), entry.get("digest")
        if wanted is None or (new_name is None and new_tag is None and digest is None):
            return
        for resource in result.resources:
            for spec_path, spec in _pod_spec_paths(resource.document):
                for field_name in ("containers", "initContainers"):
                    containers = spec.get(field_name)
                    for index, container in enumerate(containers.items if containers is not None and containers.is_seq else []):
                        image = container.get("image") if container.is_map else None
                        if image is None or image.text is None or not image.str:
                            continue
                        replaced = _replace_image(image.text, wanted, new_name, new_tag, digest)
                        if replaced is None:
                            continue
                        node = YNode("scalar", _STR_TAG, entry.start, entry.end, entry.source, text=replaced)
                        parts = [*spec_path, field_name, str(index), "image"]
                        resource.document = _apply(resource.document, "replace", parts, node)
                        resource.touched_by = entry.span()


def _pod_spec_paths(document: YNode) -> list[tuple[list[str], YNode]]:
    kind = scalar_text(document.get("kind")) or ""
    found: list[tuple[list[str], YNode]] = []
    for path, _ in POD_SPEC_PATHS.get(kind, ((GENERIC_POD_SPEC, ""),)):
        spec = path_of(document, path)
        if spec is not None and spec.is_map:
            found.append((list(path), spec))
    return found


def _split_image(image: str) -> tuple[int, int]:
    """Index where the name of ``registry/name:tag@digest`` ends, and where the tag part ends."""
    digest_at = image.find("@")
    end = digest_at if digest_at >= 0 else len(image)
    colon = image.rfind(":", 0, end)
    name_end = colon if colon > image.rfind("/", 0, end) else end
    return name_end, end


def _replace_image(old: MappedText, wanted: str, new_name: YNode | None, new_tag: YNode | None,
                   digest: YNode | None) -> MappedText | None:
    """The overridden image; its text maps into the kustomization (a token never spans two files)."""
    name_end, _ = _split_image(old.text)
    if old.text[:name_end] != wanted:
        return None
    anchor = next(node for node in (new_tag, digest, new_name) if node is not None)
    name = new_name.text if new_name is not None and new_name.text is not None \
        else MappedText.synthetic(old.text[:name_end], anchor.source, anchor.start)
    if digest is not None and digest.text is not None:
        return name + MappedText.synthetic("@", digest.source, digest.start) + digest.text
    if new_tag is not None and new_tag.text is not None:
        return name + MappedText.synthetic(":", new_tag.source, new_tag.start) + new_tag.text
    return name + MappedText.synthetic(old.text[name_end:], anchor.source, anchor.end)


def _env_file(source: SourceFile) -> dict[str, Token]:
    """``KEY=VALUE`` lines of a configMapGenerator ``envs`` file (kustomize reads no quotes or ``export``)."""
    data: dict[str, Token] = {}
    offset = 0
    for line in source.text.splitlines(keepends=True):
        stripped = line.strip()
        if stripped and not stripped.startswith("#") and "=" in stripped:
            start = offset + (len(line) - len(line.lstrip()))
            split = source.text.index("=", start)
            end = offset + len(line.rstrip("\r\n"))
            data[source.text[start:split].strip()] = Token.from_mapped(MappedText.of_range(source, split + 1, end))
        offset += len(line)
    return data


# --- entry points -------------------------------------------------------------------------------

def extract_kustomization(source: SourceFile, documents: list[YNode], ctx: ExtractContext) -> list[Launch]:
    kustomization = next(document for document in documents if is_kustomization(document))
    notes: list[str] = []
    build = Builder(ctx).build(source, kustomization, 0, notes)
    base_dir = parent_dir(source.path)
    directory = ctx.loader.display(base_dir)
    launches: list[Launch] = []
    for resource in build.resources:
        if resource.touched_by is None or not pod_specs(resource.document):
            continue
        document = resource.document
        workload = Workload(scalar_text(document.get("kind")) or "",
                            scalar_text(path_of(document, ("metadata", "name"))) or "?", document)
        launches.extend(workload_launches(workload, build.configmaps, source=source, ctx=ctx, base_dir=base_dir,
                                          span=resource.touched_by, notes=[f"kustomize build of {directory}", *notes]))
    return launches


def _patch_paths(kustomization: YNode, directory: str, loader: FileLoader) -> set[str]:
    paths: set[str] = set()
    strategic = kustomization.get("patchesStrategicMerge")
    for entry in strategic.items if strategic is not None and strategic.is_seq else []:
        value = scalar_text(entry)
        if value is not None and not _is_inline(value):
            paths.add(_resolve(loader, directory, value))
    for field_name in ("patches", "patchesJson6902"):
        entries = kustomization.get(field_name)
        for entry in entries.items if entries is not None and entries.is_seq else []:
            value = scalar_text(entry.get("path")) if entry.is_map else None
            if value is not None:
                paths.add(_resolve(loader, directory, value))
    return paths


#: the key, in a loader's memos, of the files each kustomization uses as patches
_PATCHED = "kustomize.patched"


def patched_files(directory: str, loader: FileLoader) -> frozenset[str]:
    """The files the kustomization in ``directory`` (if any, and readable) uses as patches, resolved.

    Asked for each manifest of a tree, for its directory and the one above, so each kustomization's
    are worked out once per run (not parsed again for every manifest near it); its text is still
    loaded each time, so whoever records what a file's analysis read (the cache, a fix's re-lint)
    sees it, and a text the loader was given since (a fix's) is read anew."""
    path = find_kustomization(directory, loader)
    if path is None:
        return frozenset()
    kustomization = loader.load(path)
    if kustomization is None:
        return frozenset()
    # with the texts the loader forgets (a memo holds the kustomization's text, and answers only
    # for that very text): kept for the whole run, it grew with a tree's kustomizations
    memo: dict[str, tuple[SourceFile, frozenset[str]]] = loader.path_memos.setdefault(_PATCHED, {})
    known = memo.get(path)
    if known is not None and known[0] is kustomization:
        return known[1]
    try:
        documents = load_all(kustomization)
    except YamlError:
        documents = []
    patched = (frozenset(_patch_paths(documents[0], directory, loader)) if documents and documents[0].is_map
               else frozenset())
    memo[path] = (kustomization, patched)
    return patched
