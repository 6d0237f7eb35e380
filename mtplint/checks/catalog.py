"""Stage 5 of the pipeline, the data half: the rule catalog in ``rules/``.

One YAML file per rule, validated against ``schemas/rule.schema.json``. The catalog shipped with
mtplint is validated by the test suite (so start-up does not pay for jsonschema); rule files a
user adds with ``extend-rules`` are validated when they are loaded.
"""

from __future__ import annotations

import json
import os
import re
from functools import cache

from mtplint.errors import reason
from mtplint.extract import read_file
from mtplint.files import MAX_SETTINGS_BYTES, read_regular
from mtplint.pathtext import (
    exists,
    glob_names,
    is_dir,
    is_file,
    name_stem,
    normalized,
    read_text,
    resolved_path,
)
from mtplint.records import FrozenRecord
from mtplint.settings import KEYS
from mtplint.shipped import package_path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from typing import Any, Final

DOCS_URL = "https://github.com/mtplint/mtplint/blob/main/rules/{code}.yaml"


class CatalogError(Exception):
    """A rule file that cannot be used; the message names the file, the key and the problem."""


class VersionRange(FrozenRecord):
    """Versions of an engine a rule applies to: ``start`` (inclusive) up to ``below`` (exclusive)."""

    __slots__ = ("start", "below", "note")
    start: Final[str | None]
    below: Final[str | None]
    note: Final[str]

    def __init__(self, start: str | None, below: str | None, note: str = "") -> None:
        self.start = start
        self.below = below
        self.note = note

    def describe(self, engine: str) -> str:
        if self.start and self.below:
            return f"{engine} {self.start} … <{self.below}"
        if self.start:
            return f"{engine} ≥{self.start}"
        if self.below:
            return f"{engine} <{self.below}"
        return f"every {engine} version"


class Rule(FrozenRecord):
    """A rule as its ``rules/<CODE>.yaml`` file declares it (the predicate lives in ``checks/<code>.py``)."""

    __slots__ = ("code", "name", "severity", "engines", "fix", "summary", "_docs", "affected", "supersedes", "when",
                 "message", "origin", "only_when")
    code: Final[str]
    name: Final[str]
    severity: Final[str]
    engines: Final[tuple[str, ...]]
    fix: Final[str]
    summary: Final[str]
    #: None: a built-in rule's documentation, not read yet (see :data:`COMPILED_DOCS`)
    _docs: dict[str, Any] | None
    affected: Final[dict[str, tuple[VersionRange, ...]]]
    supersedes: Final[tuple[str, ...]]
    when: Final[dict[str, dict[str, Any]] | None]
    message: Final[str | None]
    origin: Final[str]
    #: what a launch must have for the rule to find anything (:data:`LAUNCH_CONDITIONS`); empty: any launch
    only_when: Final[tuple[str, ...]]

    def __init__(self, code: str, name: str, severity: str, engines: tuple[str, ...], fix: str, summary: str,
                 docs: dict[str, Any] | None, affected: dict[str, tuple[VersionRange, ...]] | None = None,
                 supersedes: tuple[str, ...] = (), when: dict[str, dict[str, Any]] | None = None,
                 message: str | None = None, origin: str = "builtin", only_when: tuple[str, ...] = ()) -> None:
        self.code = code
        self.name = name
        self.severity = severity
        self.engines = engines
        self.fix = fix
        self.summary = summary
        self._docs = docs
        self.affected = affected if affected is not None else {}
        self.supersedes = supersedes
        self.when = when
        self.message = message
        self.origin = origin
        self.only_when = only_when

    @property
    def docs(self) -> dict[str, Any]:
        """What it does, why, examples, fix safety, references (``rules/<CODE>.yaml``'s ``docs``)."""
        if self._docs is None:
            self._docs = _builtin_docs(self.code) if self.origin == "builtin" else {}
        return self._docs

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Rule):  # the documentation counts, whether it was read yet or not
            _ = self.docs, other.docs
        return super().__eq__(other)

    __hash__ = FrozenRecord.__hash__

    @property
    def url(self) -> str:
        return DOCS_URL.format(code=self.code)

    def applies_to(self, engine: str) -> bool:
        return "any" in self.engines or engine in self.engines

    def to_json(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "name": self.name,
            "severity": self.severity,
            "engines": list(self.engines),
            "fix": self.fix,
            "summary": self.summary,
            "affected": {engine: [r.describe(engine) for r in ranges] for engine, ranges in self.affected.items()},
            "url": self.url,
            "origin": self.origin,
        }


def rules_dir() -> str:
    """``rules/`` of the checkout, or its copy inside the installed wheel."""
    return _shipped_or_checkout("rules")


def schemas_dir() -> str:
    return _shipped_or_checkout("schemas")


def _rules_shipped_with_the_compiled_files() -> bool:
    """Whether the built-in rule files are the installed package's copy: a wheel is built only with
    compiled files made from the very rule files it ships (``hatch_build.py``), and nobody edits an
    installed package's rule files, so they need no checksum there. In a checkout a developer edits
    ``rules/*.yaml``, and the next run must use the edit whether or not it was compiled yet."""
    return rules_dir() == package_path("_shipped", "rules")


def _shipped_or_checkout(name: str) -> str:
    """The directory ``name`` inside the installed wheel, or else at the top of the checkout."""
    shipped = package_path("_shipped", name)
    if is_dir(shipped):
        return shipped
    return os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(resolved_path(__file__)))), name)


def schema(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(read_text(os.path.join(schemas_dir(), name)))
    return loaded


def _describe(error: Any) -> tuple[str, str]:
    """(key, problem) in a user's words for one jsonschema error."""
    path = [str(part) for part in error.absolute_path]
    kind = error.validator
    if kind == "additionalProperties" and isinstance(error.instance, dict):
        known = set(error.schema.get("properties", {}))
        extra = sorted(str(key) for key in error.instance if key not in known)
        import difflib  # noqa: PLC0415 - a did-you-mean for an unknown key only

        name = extra[0] if extra else "?"
        close = difflib.get_close_matches(name, sorted(known), n=1)
        hint = f"; did you mean `{close[0]}`?" if close else (f" (known keys: {', '.join(sorted(known))})" if known else "")
        return ".".join([*path, name]), f"unknown key{hint}"
    if kind == "required":
        missing = str(error.message).split("'")[1] if "'" in str(error.message) else "?"
        return ".".join([*path, missing]), "missing (required)"
    if kind == "type":
        expected = error.validator_value
        expected = " or ".join(expected) if isinstance(expected, list) else expected
        words = {"array": "a list", "object": "a table/mapping", "string": "a string", "number": "a number",
                 "boolean": "true or false", "integer": "an integer"}
        return ".".join(path) or "(top level)", (
            f"expected {words.get(str(expected), expected)}, got {type(error.instance).__name__} {error.instance!r}")
    if kind == "enum":
        choices = ", ".join(repr(choice) for choice in error.validator_value)
        return ".".join(path) or "(top level)", f"{error.instance!r} is not one of {choices}"
    if kind == "pattern":
        expected = error.schema.get("description") or f"text matching {error.validator_value}"
        return ".".join(path) or "(top level)", f"{error.instance!r} has the wrong form (expected {expected})"
    if kind == "propertyNames":
        return ".".join(path) or "(top level)", f"invalid key: {error.message}"
    return ".".join(path) or "(top level)", str(error.message)


@cache
def _schema_registry() -> Any:
    """Every schema in ``schemas/`` by its ``$id``, so one can ``$ref`` another (config.schema.json
    reuses the catalog entry schemas) without any network lookup."""
    from referencing import Registry, Resource  # noqa: PLC0415 - jsonschema's: only user files are validated

    documents = [schema(os.path.basename(path))
                 for path in glob_names(schemas_dir(), lambda name: name.endswith(".schema.json"))]
    return Registry().with_resources(
        (document["$id"], Resource.from_contents(document)) for document in documents if "$id" in document)


@cache
def _validator(schema_name: str) -> Any:
    """One validator per schema for the process: an ``extend`` chain of many configuration files, or a
    folder of house rules, is validated file by file against the same few schemas."""
    import jsonschema  # noqa: PLC0415 - only user-supplied files are validated at run time

    return jsonschema.Draft202012Validator(schema(schema_name), registry=_schema_registry())


#: the cache directory where documents that passed their schema are remembered during a
#: ``check`` run (:func:`remembering_valid_documents`); None: validate every document
_VALID_DOCUMENTS_DIR: list[str | None] = [None]


class remembering_valid_documents:
    """Within the block, :func:`validate` skips a document that passed the same schemas in an
    earlier run (see :class:`mtplint.cache_directory.ValidDocuments`); ``None`` (``--no-cache``) turns it off.
    (A class, not ``contextlib.contextmanager``: contextlib is start-up no other module needs.)"""

    def __init__(self, directory: str | None) -> None:
        self._directory = directory
        self._previous: str | None = None

    def __enter__(self) -> None:
        self._previous = _VALID_DOCUMENTS_DIR[0]
        _VALID_DOCUMENTS_DIR[0] = self._directory

    def __exit__(self, *exception: object) -> None:
        _VALID_DOCUMENTS_DIR[0] = self._previous


@cache
def _schemas_digest() -> str:
    from mtplint.digest import sha256_hex  # noqa: PLC0415 - SHA-256: only a validation with the cache on

    return sha256_hex(b"".join(os.path.basename(path).encode() + b"\0" + read_file(path) + b"\0"
                               for path in glob_names(schemas_dir(), lambda name: name.endswith(".json"))))


def validate(document: Any, schema_name: str, where: str) -> None:
    """Validate against a schema in ``schemas/``; errors name the file, the key and the problem."""
    memo = memo_key = None
    if _VALID_DOCUMENTS_DIR[0] is not None:
        # a document to validate is a configuration's or house rules' (a run without either never
        # gets here)
        from mtplint.cache_directory import ValidDocuments  # noqa: PLC0415 - the cache's, only with the cache on

        memo = ValidDocuments(_VALID_DOCUMENTS_DIR[0], _schemas_digest())
        memo_key = memo.key(schema_name, document)
        if memo_key is not None and memo.known(memo_key):
            return
    import jsonschema  # noqa: PLC0415 - only user-supplied files are validated at run time

    validator = _validator(schema_name)
    errors = sorted(validator.iter_errors(document), key=lambda e: (len(list(e.absolute_path)), list(map(str, e.absolute_path))))
    if errors:
        best = jsonschema.exceptions.best_match(errors)
        key, problem = _describe(best if best is not None else errors[0])
        raise CatalogError(f"{where}: key `{key}`: {problem}")
    if memo is not None and memo_key is not None:
        memo.add(memo_key)


def _rule_from(data: dict[str, Any], origin: str) -> Rule:
    affected = {
        engine: tuple(VersionRange(r.get("from"), r.get("below"), r.get("note", "")) for r in ranges)
        for engine, ranges in (data.get("affected") or {}).items()
    }
    return Rule(
        code=data["code"],
        name=data["name"],
        severity=data["severity"],
        engines=tuple(data["engines"]),
        fix=data["fix"],
        summary=data["summary"].strip(),
        docs=data.get("docs"),  # the compiled catalog keeps it apart (COMPILED_DOCS)
        affected=affected,
        supersedes=tuple(data.get("supersedes", ())),
        when=data.get("when"),
        message=data.get("message"),
        origin=origin,
        only_when=tuple(data.get("only_when", ())),
    )


def load_rule_file(path: str, origin: str, check_schema: bool) -> Rule:
    from mtplint.startup import yaml  # noqa: PLC0415 - PyYAML: the built-in rules come compiled (COMPILED_CATALOG)

    try:
        # a FIFO or device (`/dev/zero`) named as a rule file is refused unopened (mtplint.files)
        data = yaml.safe_load(read_regular(path, MAX_SETTINGS_BYTES).decode("utf-8"))
    except OSError as error:
        raise CatalogError(f"{path}: cannot read rule file: {error.strerror or error}") from error
    except yaml.YAMLError as error:
        raise CatalogError(f"{path}: invalid YAML: {error}") from error
    except UnicodeDecodeError as error:
        raise CatalogError(f"{path}: cannot read rule file: not UTF-8 text (byte {error.object[error.start]:#04x} "
                           f"at offset {error.start}); save it as UTF-8") from None
    except RecursionError:
        raise CatalogError(f"{path}: invalid YAML: nested too deeply to read") from None
    except ValueError as error:  # PyYAML's int(): a number past Python's limit of 4,300 digits
        raise CatalogError(f"{path}: invalid YAML: {reason(error)}") from None
    if not isinstance(data, dict):
        raise CatalogError(f"{path}: key `(top level)`: a rule file must be a mapping")
    if check_schema:
        validate(data, "rule.schema.json", str(path))
    expected = name_stem(os.path.basename(path))
    if re.fullmatch(r"[A-Z]{2,6}\d{3}", expected) and data.get("code") != expected:
        raise CatalogError(f"{path}: key `code`: {data.get('code')!r} does not match the file name {expected!r}")
    return _rule_from(data, origin)


def _check_when(when: dict[str, dict[str, Any]], path: str) -> None:
    """A house rule may only name effective settings that exist (``mtplint inspect`` lists them)."""
    for name in when:
        if name not in KEYS:
            import difflib  # noqa: PLC0415 - a did-you-mean for an unknown setting only

            close = difflib.get_close_matches(name, sorted(KEYS), n=1)
            hint = f"; did you mean `{close[0]}`?" if close else f" (one of {', '.join(sorted(KEYS))})"
            raise CatalogError(f"{path}: key `when.{name}`: not an effective setting{hint}")


def _check_message(message: str | None, when: dict[str, dict[str, Any]], path: str) -> None:
    """A house rule's ``message`` may only use ``{placeholders}`` naming settings of its ``when``
    (the values the finding is formatted with); anything else would be printed as it stands."""
    if message is None:
        return
    import string  # noqa: PLC0415 - a house rule's message only: the built-in rules come compiled and checked

    try:
        fields = [(text, spec or "") for _, text, spec, _ in string.Formatter().parse(message) if text is not None]
    except ValueError as error:
        raise CatalogError(f"{path}: key `message`: {error} (write a literal brace as {{{{ or }}}})") from error
    for placeholder, spec in fields:
        name = re.split(r"[.\[]", placeholder, maxsplit=1)[0]
        if name not in when:
            what = f"`{{{placeholder}}}`" if placeholder else "`{}`"
            known = ", ".join(f"{{{key}}}" for key in when)
            raise CatalogError(f"{path}: key `message`: placeholder {what} is not a setting named in `when` "
                               f"(this rule can use {known})")
        if placeholder != name:
            # `{x.__class__…}` reads attributes of the value, `{x[0]}` indexes it: not a setting's value
            raise CatalogError(f"{path}: key `message`: placeholder `{{{placeholder}}}` reads an attribute or an "
                               f"item of `{name}`; write `{{{name}}}`")
        _check_format_spec(spec, placeholder, path)


#: a format spec a message may give a value: ``[[fill]align][sign][#][0][width][,|_][.precision][type]``
#: (https://docs.python.org/3/library/string.html#format-specification-mini-language), no nested fields
_FORMAT_SPEC = r"(?:.?[<>=^])?[-+ ]?z?#?0?(?P<width>\d*)[,_]?(?:\.(?P<precision>\d+))?[bcdeEfFgGnosxX%]?"
#: the widest field and the most digits a message may ask for: a `{x:>2000000000}` wrote 2 GB per finding
MAX_FORMAT_WIDTH = 200


def _check_format_spec(spec: str, placeholder: str, path: str) -> None:
    match = re.fullmatch(_FORMAT_SPEC, spec, re.S)  # compiled on first use (re's cache): house rules only
    if match is None:
        raise CatalogError(f"{path}: key `message`: `{{{placeholder}:{spec}}}` is not a simple format spec "
                           "(fill, alignment, sign, width, precision and type only)")
    for part in ("width", "precision"):
        digits = match.group(part) or "0"
        if len(digits) > 3 or int(digits) > MAX_FORMAT_WIDTH:
            raise CatalogError(f"{path}: key `message`: `{{{placeholder}:{spec}}}` asks for a {part} of {digits}; "
                               f"at most {MAX_FORMAT_WIDTH}")


#: the built-in rule files, already parsed: ``tools/regenerate.py`` writes it from ``rules/*.yaml``
#: (which stay the source of truth). Parsing 40 YAML files with PyYAML's pure-Python loader costs
#: more than linting a compose file, so start-up reads this JSON instead; in a checkout,
#: after checking that it was compiled from exactly the rule files present (a checksum of their
#: names and bytes), see :func:`_rules_shipped_with_the_compiled_files`.
COMPILED_CATALOG = os.path.join(os.path.dirname(__file__), "builtin_rules.json")
#: the built-in rules' documentation, compiled alongside but kept apart: four fifths of the compiled
#: bytes, which only the commands that show it read (``rule``, SARIF's rule descriptions, the
#: tuner's references) -- every other run would decode it for nothing
COMPILED_DOCS = os.path.join(os.path.dirname(__file__), "builtin_docs.json")


def _rule_file_names() -> tuple[str, list[str]]:
    """The directory of the built-in rule files and their names (``MTP*.yaml``), sorted, from the
    directory's listing: every run checksums them, and needs no path object for each (glob
    compiles its pattern and builds a path per entry to test it)."""
    directory = os.fspath(rules_dir())
    try:
        names = os.listdir(directory)
    except OSError:
        return directory, []
    return directory, [name for name in sorted(names) if name.startswith("MTP") and name.endswith(".yaml")]


def _rule_files() -> list[str]:
    """``rules_dir().glob("MTP*.yaml")``, sorted."""
    directory, names = _rule_file_names()
    return [os.path.join(directory, name) for name in names]


def _builtin_digest() -> str:
    """:func:`rules_digest` of the built-in rule files."""
    directory, names = _rule_file_names()
    return _digest((name, os.path.join(directory, name)) for name in names)


def rules_digest(paths: Sequence[str | os.PathLike[str]]) -> str:
    """Checksum of the rule files' names and bytes: CRC-32, chained over the files.

    It tells a compiled catalog made from other rule files (an edit not yet compiled) from the
    right one; nobody forges a rule file against it. CPython's own SHA-256, the cryptographic
    digest used elsewhere, takes many times as long as CRC-32 (zlib's, through binascii) over
    the rule files that every run in a checkout checksums. The files
    are read without a buffered file object each (:func:`mtplint.extract.read_file`): those cost
    more than the checksum."""
    return _digest((os.path.basename(path), path) for path in paths)


def _digest(files: Iterable[tuple[str, str | os.PathLike[str]]]) -> str:
    """:func:`rules_digest` of the files named, each given as its name and path."""
    import binascii  # noqa: PLC0415 - only a checkout's rule files are checksummed at run time

    checksum = 0
    for name, path in files:
        data = read_file(path)
        checksum = binascii.crc32(f"{name}\0{len(data)}\0".encode(), checksum)
        checksum = binascii.crc32(data, checksum)
    return f"crc32:{checksum:08x}"


def compile_catalog(paths: list[str]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The compiled form of the rule files (:data:`COMPILED_CATALOG`: their digest and each file's
    data as parsed from YAML, but its ``docs``) and their documentation (:data:`COMPILED_DOCS`: the
    digest and each rule's ``docs``)."""
    documents = []
    docs = {}
    for path in paths:
        rule = load_rule_file(path, "builtin", check_schema=False)  # the same checks as a direct load
        data = _yaml_load(read_text(path))
        docs[rule.code] = data.pop("docs")
        documents.append({"file": os.path.basename(path), "code": rule.code, "data": data})
    digest = rules_digest(paths)
    return {"digest": digest, "rules": documents}, {"digest": digest, "docs": docs}


def _read_compiled(compiled_file: str) -> dict[str, Any] | None:
    """A compiled file's data, or None when it is missing, unreadable or (in a checkout) compiled
    from other rule files than the built-in ones (a rule file was edited since: the YAML wins)."""
    compiled = _compiled_data(compiled_file)
    if compiled is None or (not _rules_shipped_with_the_compiled_files()
                            and compiled.get("digest") != _builtin_digest()):
        return None
    return compiled


def _compiled_data(compiled_file: str) -> dict[str, Any] | None:
    try:
        compiled = json.loads(read_text(compiled_file))
    except (OSError, ValueError):
        return None
    return compiled if isinstance(compiled, dict) else None


def stale_compiled_files() -> list[str]:
    """The compiled files (:data:`COMPILED_CATALOG`, :data:`COMPILED_DOCS`) that were not compiled
    from the built-in rule files as they are: what stops a wheel's build (``hatch_build.py``)."""
    digest = _builtin_digest()
    stale = []
    for compiled_file in (COMPILED_CATALOG, COMPILED_DOCS):
        compiled = _compiled_data(compiled_file)
        if compiled is None or compiled.get("digest") != digest:
            stale.append(compiled_file)
    return stale


def _compiled_rules() -> tuple[Rule, ...] | None:
    compiled = _read_compiled(COMPILED_CATALOG)
    return None if compiled is None else tuple(_rule_from(document["data"], "builtin") for document in compiled["rules"])


@cache
def _compiled_docs() -> dict[str, Any] | None:
    compiled = _read_compiled(COMPILED_DOCS)
    return None if compiled is None else dict(compiled["docs"])


def _builtin_docs(code: str) -> dict[str, Any]:
    """A built-in rule's documentation: compiled, or (compiled from other rule files) its YAML's."""
    compiled = _compiled_docs()
    if compiled is not None and code in compiled:
        docs: dict[str, Any] = compiled[code]
        return docs
    path = os.path.join(rules_dir(), f"{code}.yaml")
    return load_rule_file(path, "builtin", check_schema=False).docs if is_file(path) else {}


def _yaml_load(text: str) -> Any:
    from mtplint.startup import yaml  # noqa: PLC0415 - PyYAML: only for rule files not compiled

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when PyYAML was built with it
    return yaml.load(text, Loader=loader)  # a safe loader


@cache
def builtin_rules() -> tuple[Rule, ...]:
    compiled = _compiled_rules()
    if compiled is not None:
        return compiled
    return tuple(load_rule_file(path, "builtin", check_schema=False) for path in _rule_files())


def load_catalog(extend: Sequence[str | os.PathLike[str]] = ()) -> dict[str, Rule]:
    """Built-in rules plus the user's ``extend-rules`` files (or directories of them)."""
    catalog = {rule.code: rule for rule in builtin_rules()}
    for given in extend:
        entry = normalized(given)
        if not exists(entry):
            raise CatalogError(f"{entry}: key `extend-rules`: no such rule file or directory")
        # glob("*.y*ml"): a name that ends with "ml" after a ".y"
        paths = glob_names(entry, lambda name: name.endswith("ml") and ".y" in name[:-2]) if is_dir(entry) else [entry]
        if is_dir(entry) and not paths:
            raise CatalogError(f"{entry}: no rule files (*.yaml) in this directory")
        for path in paths:
            rule = load_rule_file(path, str(path), check_schema=True)
            earlier = catalog.get(rule.code)
            if earlier is not None and earlier.origin == "builtin":
                raise CatalogError(f"{path}: key `code`: {rule.code} is a built-in rule; house rules need their own code")
            if earlier is not None:
                if resolved_path(earlier.origin) == resolved_path(path):
                    continue  # the same file named twice (a configuration and --extend-rules add up)
                raise CatalogError(f"{path}: key `code`: {rule.code} is already defined in {earlier.origin}")
            namesake = next((other for other in catalog.values() if other.name == rule.name), None)
            if namesake is not None:
                # a name selects a rule (`--select NAME`): two rules cannot share one
                raise CatalogError(f"{path}: key `name`: {rule.name!r} is already the name of {namesake.code}"
                                   + ("" if namesake.origin == "builtin" else f" ({namesake.origin})"))
            if rule.when is None:
                raise CatalogError(f"{path}: key `when`: missing — a house rule needs conditions on effective settings "
                                   "(e.g. `when: {spec_method: {in: [mtp]}, max_concurrency: {gt: 64}}`)")
            _check_when(rule.when, path)
            _check_message(rule.message, rule.when, path)
            catalog[rule.code] = rule
    return catalog
