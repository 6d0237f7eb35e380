"""The Language Server Protocol side of ``mtplint server`` (pygls, lsprotocol).

Linting runs on one worker thread, off the message loop: the rule and GPU catalogs a
configuration adds are process-wide, so two lints never run at once. A change is linted after a
short pause (:data:`DEBOUNCE_SECONDS`), so a burst of keystrokes costs one lint; a lint whose
document has moved on by the time it would start is skipped, and one that finishes for an older
version is dropped. Each lint's findings are published on the files they are in (a ``--config``
YAML's finding on the YAML), merged over the open documents whose launches read that file.
"""

from __future__ import annotations

import asyncio
import gc
import os
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.uris import from_fs_path, to_fs_path

from mtplint import __version__
from mtplint.checks import Finding
from mtplint.pathtext import normalized
from mtplint.server.session import (
    CONFIG_NAMES,
    ENCODINGS,
    DocumentLint,
    Range,
    TextChange,
    fix_all_changes,
    fix_changes,
    fix_title,
    hover_text,
    lint_document,
    offered,
    offset_of,
    range_of,
    suppression,
)
from mtplint.source import SourceFile

#: the pause after a change before its lint starts: a burst of keystrokes is linted once
DEBOUNCE_SECONDS = 0.15
#: the longest pause after a change: a document whose lint takes longer is linted after this pause
MAX_PAUSE_SECONDS = 1.0
#: how long a request (hover, code actions) waits for the lint of the current text
WAIT_FOR_LINT_SECONDS = 10.0
FIX_ALL_KIND = "source.fixAll.mtplint"
SEVERITIES = {"error": types.DiagnosticSeverity.Error, "warning": types.DiagnosticSeverity.Warning,
              "info": types.DiagnosticSeverity.Information}


class _Protocol(LanguageServerProtocol):
    """pygls' protocol, without its memory growth per notification: pygls 2.1 keeps the future of
    each notification its generator handlers (didOpen, didChange, didClose, didSave) run under in
    ``_request_futures``, where only a request's response removes one -- ~1 KB for every keystroke
    of a session. Each is dropped here once its handler is done."""

    def _handle_notification(self, method_name: str, params: Any) -> None:
        before = set(self._request_futures)
        super()._handle_notification(method_name, params)
        for msg_id in set(self._request_futures) - before:
            future = self._request_futures[msg_id]
            if future.done():
                del self._request_futures[msg_id]
            else:
                future.add_done_callback(partial(self._forget, msg_id))

    def _forget(self, msg_id: str | int, _: object) -> None:
        self._request_futures.pop(msg_id, None)


class MtplintServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("mtplint", __version__, text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
                         protocol_cls=_Protocol)
        self.lint_thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="mtplint-lint")
        #: ``mtplint check`` options the client gave (``initializationOptions.args``)
        self.check_args: list[str] = []
        self.debounce = DEBOUNCE_SECONDS
        #: how positions count characters (:meth:`negotiated_encoding`, once initialised)
        self.encoding = "utf-16"
        #: the latest lint of each open document, by URI
        self.lints: dict[str, DocumentLint] = {}
        #: the lint under way (or queued) for each open document: (version, future)
        self.running: dict[str, tuple[int | None, asyncio.Future[DocumentLint | None]]] = {}
        self.timers: dict[str, asyncio.TimerHandle] = {}
        #: how long the last lint of each open document took (seconds)
        self.durations: dict[str, float] = {}
        #: the diagnostics last published, by URI
        self.published: dict[str, list[types.Diagnostic]] = {}

    # -- state --------------------------------------------------------------------------------

    def negotiated_encoding(self) -> str:
        """The position encoding agreed at initialisation (the protocol's default: UTF-16)."""
        encoding = str(self.workspace.position_encoding or "utf-16")
        return encoding if encoding in ENCODINGS else "utf-16"

    def open_path(self, uri: str) -> str | None:
        path = to_fs_path(uri)
        return os.path.abspath(path) if path else None

    def buffers(self) -> dict[str, str]:
        """Every open document's text by its absolute path: they stand for their files."""
        texts = {}
        for uri, document in list(self.workspace.text_documents.items()):
            path = self.open_path(uri)
            if path is not None:
                texts[path] = document.source
        return texts

    def root_of(self, path: str) -> Path | None:
        """The workspace folder that holds ``path`` (the innermost), where ``check`` would run;
        None: none does (the server's working directory stands in)."""
        uris = [*self.workspace.folders, *([self.workspace.root_uri] if self.workspace.root_uri else [])]
        folders = [folder for folder in map(self.open_path, uris)
                   if folder is not None and (path + os.sep).startswith(folder.rstrip(os.sep) + os.sep)]
        return Path(max(folders, key=len)) if folders else None

    def current_version(self, uri: str) -> int | None:
        document = self.workspace.text_documents.get(uri)
        return None if document is None else document.version

    # -- scheduling ---------------------------------------------------------------------------

    def schedule(self, uri: str, delay: float | None = None) -> None:
        """Lint ``uri`` after ``delay``, replacing a lint not yet started. By default, after the
        debounce pause, or as long as its last lint took (up to :data:`MAX_PAUSE_SECONDS`): a
        lint under way cannot be interrupted, and one started between two keystrokes of a long
        document would hold up the lint of the text a request then asks about."""
        timer = self.timers.pop(uri, None)
        if timer is not None:
            timer.cancel()
        if delay is None:
            delay = max(self.debounce, min(self.durations.get(uri, 0.0), MAX_PAUSE_SECONDS))
        self.timers[uri] = asyncio.get_running_loop().call_later(delay, self.start_lint, uri)

    def schedule_readers(self, path: str, also: str | None = None) -> None:
        """Lint again every open document whose last lint read ``path`` (and ``also``)."""
        for uri, linted in list(self.lints.items()):
            if uri != also and path in linted.reads:
                self.schedule(uri)

    def start_lint(self, uri: str) -> asyncio.Future[DocumentLint | None] | None:
        self.timers.pop(uri, None)
        path = self.open_path(uri)
        if path is None or uri not in self.workspace.text_documents:
            return None
        version = self.current_version(uri)
        running = self.running.get(uri)
        if running is not None and running[0] == version and not running[1].done():
            return running[1]
        buffers = self.buffers()
        loop = asyncio.get_running_loop()
        future = loop.run_in_executor(self.lint_thread, self._lint_if_current, uri, path, buffers, version)
        self.running[uri] = (version, future)
        future.add_done_callback(lambda done: self.finished(uri, version, done))
        return future

    def _lint_if_current(self, uri: str, path: str, buffers: dict[str, str],
                         version: int | None) -> DocumentLint | None:
        """On the lint thread: the lint, unless a newer version arrived while it waited its turn."""
        if self.current_version(uri) != version:
            return None
        started = time.perf_counter()
        linted = lint_document(path, buffers, self.check_args, version, self.root_of(path))
        self.durations[uri] = time.perf_counter() - started
        return linted

    def finished(self, uri: str, version: int | None, future: asyncio.Future[DocumentLint | None]) -> None:
        if future.cancelled():
            return
        if future.exception() is not None:  # lint_document reports its own failures: this is the server's
            self.log(types.MessageType.Error, f"linting {uri} failed: {future.exception()!r}")
            return
        linted = future.result()
        if linted is None or uri not in self.workspace.text_documents or self.current_version(uri) != version:
            return  # the document moved on (or closed): a newer lint is scheduled
        self.lints[uri] = linted
        if linted.problem is not None:
            self.log(types.MessageType.Error, f"{linted.path}: {linted.problem}")
        self.publish()

    async def current_lint(self, uri: str) -> DocumentLint | None:
        """The lint of the document's current text, waiting for it (started now if need be)."""
        version = self.current_version(uri)
        linted = self.lints.get(uri)
        if linted is not None and linted.version == version:
            return linted
        timer = self.timers.pop(uri, None)
        if timer is not None:
            timer.cancel()
        future = self.start_lint(uri)
        if future is None:
            return None
        try:
            return await asyncio.wait_for(asyncio.shield(future), WAIT_FOR_LINT_SECONDS)
        except (asyncio.CancelledError, asyncio.TimeoutError):
            return None
        except Exception:  # reported by finished()
            return None

    # -- diagnostics --------------------------------------------------------------------------

    def publish(self) -> None:
        """Publish what changed of every file's diagnostics: the findings of each open document's
        latest lint, by the file each is in, and a note on a document that could not be linted.
        A linted document without findings gets an empty list: its earlier ones are gone."""
        by_uri: dict[str, dict[tuple[Any, ...], types.Diagnostic]] = {uri: {} for uri in self.lints}
        for uri, linted in self.lints.items():
            if linted.problem is not None:
                by_uri[uri][("problem", linted.problem)] = self.problem_diagnostic(linted)
            for file, findings in linted.findings_by_file().items():
                target = from_fs_path(file) or uri
                for finding in findings:
                    key = (finding.code, finding.span.start, finding.span.end, finding.message)
                    if key not in by_uri.setdefault(target, {}):
                        by_uri[target][key] = self.diagnostic(finding, linted)
        for uri in set(self.published) - set(by_uri):
            if self.published.pop(uri):
                self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))
        for uri, found in by_uri.items():
            diagnostics = list(found.values())
            if uri in self.published and self.published[uri] == diagnostics:
                continue
            self.published[uri] = diagnostics
            self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(
                uri=uri, diagnostics=diagnostics, version=self.current_version(uri)))

    def to_range(self, range_: Range) -> types.Range:
        (line, character), (end_line, end_character) = range_
        return types.Range(start=types.Position(line=line, character=character),
                           end=types.Position(line=end_line, character=end_character))

    def diagnostic(self, finding: Finding, linted: DocumentLint) -> types.Diagnostic:
        source = linted.sources.get(finding.span.file)
        range_ = self.to_range(range_of(finding.span, source, self.encoding) if source is not None
                               else ((finding.span.line - 1, finding.span.column - 1),
                                     (finding.span.end_line - 1, finding.span.end_column - 1)))
        related = None
        launch = finding.launch_span
        launch_source = linted.sources.get(launch.file) if launch is not None else None
        if launch is not None and launch_source is not None and launch.file != finding.span.file:
            # a finding in a --config file or an .env file: the launch that reads it
            related = [types.DiagnosticRelatedInformation(
                location=types.Location(uri=from_fs_path(linted.file_of(launch.file)) or "",
                                        range=self.to_range(range_of(launch, launch_source, self.encoding))),
                message=f"the {finding.code} launch that reads {finding.span.file}")]
        return types.Diagnostic(
            range=range_,
            message=finding.message,
            severity=SEVERITIES.get(finding.severity, types.DiagnosticSeverity.Warning),
            code=finding.code,
            code_description=types.CodeDescription(href=finding.rule.url) if finding.rule.url else None,
            source="mtplint",
            related_information=related,
            data={"fix": finding.fix.applicability} if finding.fix is not None else None,
        )

    def problem_diagnostic(self, linted: DocumentLint) -> types.Diagnostic:
        start = types.Position(line=0, character=0)
        return types.Diagnostic(range=types.Range(start=start, end=start), message=linted.problem or "",
                                severity=types.DiagnosticSeverity.Error, code="MTP001", source="mtplint")

    def log(self, kind: types.MessageType, message: str) -> None:
        self.window_log_message(types.LogMessageParams(type=kind, message=message))

    # -- code actions -------------------------------------------------------------------------

    def workspace_edit(self, changes: Sequence[TextChange]) -> types.WorkspaceEdit:
        by_uri: dict[str, list[types.TextEdit]] = {}
        for change in changes:
            by_uri.setdefault(from_fs_path(change.file) or change.file, []).append(
                types.TextEdit(range=self.to_range(change.range), new_text=change.text))
        return types.WorkspaceEdit(changes=by_uri)

    def code_actions(self, uri: str, linted: DocumentLint, wanted: types.Range,
                     only: Sequence[str] | None) -> list[types.CodeAction]:
        """Quick fixes and suppressions for the findings in this document that the range touches
        -- found by its own lint or by another's (a ``--config`` YAML's, by the lint of the script
        that names it) -- and the action that applies every safe fix of the file (its edit worked
        out on resolve)."""
        actions: list[types.CodeAction] = []
        quick = only is None or any(kind in ("quickfix", "") for kind in only)
        path = linted.path
        text = self.workspace.get_text_document(uri).source
        seen: set[tuple[str, int, int, str]] = set()
        for lint in [linted, *(other for other in self.lints.values() if other is not linted)] if quick else []:
            source = lint.source_of(path, text)
            if source is None:
                continue
            for finding in lint.findings:
                key = (finding.code, finding.span.start, finding.span.end, finding.message)
                if finding.span.file != source.display or key in seen:
                    continue
                seen.add(key)
                if _touches(range_of(finding.span, source, self.encoding), wanted):
                    actions.extend(self.finding_actions(finding, lint, source))
        fix_all = only is None or any(FIX_ALL_KIND.startswith(kind) for kind in only)
        if fix_all and any(f.fix is not None and f.fix.applicability == "safe" for f in linted.findings):
            actions.append(types.CodeAction(title="mtplint: fix all safe fixes in this file", kind=FIX_ALL_KIND,
                                            data={"uri": uri, "version": linted.version}))
        return actions

    def finding_actions(self, finding: Finding, lint: DocumentLint, source: SourceFile) -> list[types.CodeAction]:
        """The finding's own fix, then a noqa comment for it (where the file can hold one)."""
        actions = []
        diagnostic = self.diagnostic(finding, lint)
        if offered(finding):
            assert finding.fix is not None
            changes = fix_changes(finding.fix, lint, self.encoding)
            if changes:
                actions.append(types.CodeAction(
                    title=fix_title(finding), kind=types.CodeActionKind.QuickFix, diagnostics=[diagnostic],
                    is_preferred=finding.fix.applicability == "safe", edit=self.workspace_edit(changes)))
        suppress = suppression(finding, lint)
        if suppress is not None:
            title, edit = suppress
            change = TextChange(os.path.abspath(source.path), range_of(edit.span, source, self.encoding), edit.content)
            actions.append(types.CodeAction(title=title, kind=types.CodeActionKind.QuickFix, diagnostics=[diagnostic],
                                            edit=self.workspace_edit([change])))
        return actions

    def fix_all(self, path: str, buffers: dict[str, str]) -> list[TextChange]:
        """On the lint thread: every safe fix ``mtplint check --fix`` would apply to the file, as
        changes to the buffers; none when the fixing fails (said in the log)."""
        try:
            return fix_all_changes(path, buffers, self.check_args, self.encoding, self.root_of(path))
        except Exception as error:  # a configuration error, or the fix engine's own: no edit, the server goes on
            self.log(types.MessageType.Error, f"fixing {path} failed: {error!r}")
            return []


def _touches(found: Range, wanted: types.Range) -> bool:
    start, end = found
    wanted_start = (wanted.start.line, wanted.start.character)
    wanted_end = (wanted.end.line, wanted.end.character)
    return start <= wanted_end and wanted_start <= end


def create_server() -> MtplintServer:
    server = MtplintServer()

    @server.feature(types.INITIALIZE)
    def initialize(ls: MtplintServer, params: types.InitializeParams) -> None:
        options = params.initialization_options
        if isinstance(options, dict):
            args = options.get("args")
            if isinstance(args, list) and all(isinstance(arg, str) for arg in args):
                ls.check_args = list(args)
            debounce = options.get("debounceMs")
            if isinstance(debounce, (int, float)) and 0 <= debounce <= 10_000:
                ls.debounce = debounce / 1000

    @server.feature(types.INITIALIZED)
    async def initialized(ls: MtplintServer, params: types.InitializedParams) -> None:
        ls.encoding = ls.negotiated_encoding()
        watching = ls.client_capabilities.workspace
        if watching is None or not (watching.did_change_watched_files
                                    and watching.did_change_watched_files.dynamic_registration):
            return
        # any file: a configuration, or a file a launch may read (.env, a YAML, a script, a unit)
        watchers = [types.FileSystemWatcher(glob_pattern="**/*")]
        try:
            await ls.client_register_capability_async(types.RegistrationParams(registrations=[types.Registration(
                id="mtplint-watched-files", method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                register_options=types.DidChangeWatchedFilesRegistrationOptions(watchers=watchers))]))
        except Exception as error:  # a client that refuses: saves in the editor still re-lint
            ls.log(types.MessageType.Warning, f"watching files not possible: {error}")

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: MtplintServer, params: types.DidOpenTextDocumentParams) -> None:
        uri = params.text_document.uri
        ls.schedule(uri, 0)
        path = ls.open_path(uri)
        if path is not None:
            ls.schedule_readers(path, also=uri)  # its text now stands for the file on disk

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: MtplintServer, params: types.DidChangeTextDocumentParams) -> None:
        uri = params.text_document.uri
        ls.schedule(uri)
        path = ls.open_path(uri)
        if path is not None:
            ls.schedule_readers(path, also=uri)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: MtplintServer, params: types.DidSaveTextDocumentParams) -> None:
        uri = params.text_document.uri
        path = ls.open_path(uri)
        if path is not None and Path(path).name in CONFIG_NAMES:
            for other in list(ls.workspace.text_documents):
                ls.schedule(other)
            return
        ls.schedule(uri)
        if path is not None:
            ls.schedule_readers(path, also=uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: MtplintServer, params: types.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        timer = ls.timers.pop(uri, None)
        if timer is not None:
            timer.cancel()
        ls.running.pop(uri, None)
        ls.lints.pop(uri, None)
        ls.durations.pop(uri, None)
        ls.publish()
        path = ls.open_path(uri)
        if path is not None:
            ls.schedule_readers(path)  # the file on disk stands for it again

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def did_change_watched_files(ls: MtplintServer, params: types.DidChangeWatchedFilesParams) -> None:
        for change in params.changes:
            path = ls.open_path(change.uri)
            if path is None:
                continue
            if Path(path).name in CONFIG_NAMES:
                for uri in list(ls.workspace.text_documents):
                    ls.schedule(uri)
                return
            if change.uri not in ls.workspace.text_documents:  # an open buffer stands for its file
                ls.schedule_readers(path)

    @server.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
    def did_change_folders(ls: MtplintServer, params: types.DidChangeWorkspaceFoldersParams) -> None:
        for uri in list(ls.workspace.text_documents):
            ls.schedule(uri)

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    async def hover(ls: MtplintServer, params: types.HoverParams) -> types.Hover | None:
        uri = params.text_document.uri
        linted = await ls.current_lint(uri)
        path = ls.open_path(uri)
        if linted is None or path is None:
            return None
        text = ls.workspace.get_text_document(uri).source
        source = linted.source_of(path, text) or SourceFile(normalized(path), path, text)
        offset = offset_of(source, params.position.line, params.position.character, ls.encoding)
        found = hover_text([linted, *(other for other in ls.lints.values() if other is not linted)], path, text, offset)
        if found is None:
            return None
        return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=found))

    @server.feature(types.TEXT_DOCUMENT_CODE_ACTION, types.CodeActionOptions(
        code_action_kinds=[types.CodeActionKind.QuickFix, FIX_ALL_KIND], resolve_provider=True))
    async def code_action(ls: MtplintServer, params: types.CodeActionParams) -> list[types.CodeAction] | None:
        uri = params.text_document.uri
        linted = await ls.current_lint(uri)
        if linted is None:
            return None
        return ls.code_actions(uri, linted, params.range, params.context.only)

    @server.feature(types.CODE_ACTION_RESOLVE)
    async def resolve_code_action(ls: MtplintServer, action: types.CodeAction) -> types.CodeAction:
        data = action.data if isinstance(action.data, dict) else {}
        uri = data.get("uri")
        if action.kind != FIX_ALL_KIND or not isinstance(uri, str) or uri not in ls.workspace.text_documents:
            return action
        path = ls.open_path(uri)
        if path is None:
            return action
        loop = asyncio.get_running_loop()
        changes = await loop.run_in_executor(ls.lint_thread, ls.fix_all, path, ls.buffers())
        action.edit = ls.workspace_edit(changes)
        return action

    return server


def serve() -> int:
    """Serve on standard input and output until the client says ``exit``."""
    # the command line runs with the cyclic collector off (a run's objects live to its end); a
    # server lives for hours and its message loop makes cycles
    gc.enable()
    server = create_server()
    # the messages go out on a copy of standard output, which pygls closes at the end (the command
    # line still flushes its own); anything else printed meanwhile goes to standard error, not
    # into the message stream
    messages = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    sys.stdout = sys.stderr
    try:
        server.start_io(sys.stdin.buffer, messages)
    finally:
        sys.stdout = sys.__stdout__
    return 0
