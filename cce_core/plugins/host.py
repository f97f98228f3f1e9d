"""Plugin discovery and the pack/embedder registries.

Owns the single ``pluggy.PluginManager`` of a process: it loads every
distribution advertising the ``cce`` entry-point group (or plugins handed in
directly by tests), collects their packs, embedders and document chunkers
(and pools their file conventions, which the default ranking's roles read),
resolves a file to its pack by lowercased extension and a document format to
its chunker, and reports the ``pack_set_id`` other engines write into shared
artifacts (language packs only: document chunkers never enter it). The cheap
structural checks run here at start-up so a clash between two installed packs
fails loudly instead of mis-chunking.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any

import pluggy

from cce_core.foundation.errors import CceError
from cce_core.hookspecs import (
    ENTRY_POINT_GROUP,
    PROJECT_NAME,
    CceHookSpecs,
    DocumentChunker,
    Embedder,
    FileConventions,
    LanguagePack,
)
from cce_core.plugins.validation import (
    document_chunker_problems,
    file_conventions_problems,
    hook_name_problems,
    structural_problems,
)


@dataclass
class PluginLoadFailure:
    """A plugin that could not be loaded or registered, and why (one start-up problem)."""

    entry_point: str
    distribution: str
    message: str
    what: str = "failed to load"  # or what else went wrong, e.g. "failed while registering"

    def describe(self) -> str:
        return (
            f'plugin "{self.entry_point}" from distribution "{self.distribution}" {self.what}: '
            f"{self.message} — reinstall or uninstall that distribution"
        )


def _call_order(hook: pluggy.HookCaller) -> list[pluggy.HookImpl]:
    """The implementations of ``hook`` in the order pluggy itself calls them.

    ``get_hookimpls`` lists them from last called to first (``trylast``
    ones, unmarked ones, ``tryfirst`` ones, each group oldest first), and
    pluggy's call loop walks that list backwards; so does this. Wrappers wrap
    a call pluggy makes, so a hook the host calls one implementation at a
    time has none to run.
    """
    return [impl for impl in reversed(hook.get_hookimpls()) if not (impl.wrapper or impl.hookwrapper)]


def _plugin_label(plugin: Any, distribution: str) -> str:
    name = getattr(plugin, "__name__", None) or type(plugin).__name__
    return f"{name} ({distribution})" if distribution else name


def extension_of(path: str) -> str | None:
    """Lowercased final extension with its dot; a leading-dot-only name has none."""
    name = path.replace("\\", "/").rsplit("/", 1)[-1]
    dot = name.rfind(".")
    if dot <= 0:
        return None
    return name[dot:].lower()


@dataclass
class PackRegistry:
    """Packs in registration order, plus the structural problems seen while adding them."""

    packs: list[LanguagePack] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    _by_extension: dict[str, LanguagePack] = field(default_factory=dict)

    def register(self, pack: LanguagePack) -> bool:
        """Add ``pack`` unless it breaks a structural rule (the problem is recorded)."""
        problems = structural_problems(pack, self.packs)
        if problems:
            self.problems.extend(problems)
            return False
        self.packs.append(pack)
        for ext in pack.extensions:
            self._by_extension[ext] = pack
        return True

    def pack_for(self, path: str) -> LanguagePack | None:
        ext = extension_of(path)
        return self._by_extension.get(ext) if ext else None

    def names(self) -> list[str]:
        return [p.name for p in self.packs]

    @property
    def pack_set_id(self) -> str:
        return ",".join(sorted(self.names()))


@dataclass
class DocumentChunkerRegistry:
    """Document chunkers in registration order, plus the problems seen while adding them."""

    chunkers: list[DocumentChunker] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    _by_format: dict[str, DocumentChunker] = field(default_factory=dict)

    def register(self, chunker: DocumentChunker) -> bool:
        """Add ``chunker`` unless it breaks a registration rule (the problem is recorded)."""
        problems = document_chunker_problems(chunker, self.chunkers)
        if problems:
            self.problems.extend(problems)
            return False
        self.chunkers.append(chunker)
        for fmt in chunker.formats:
            self._by_format[fmt] = chunker
        return True

    def for_format(self, format_name: str) -> DocumentChunker | None:
        return self._by_format.get(format_name)

    def formats(self) -> list[str]:
        return sorted(self._by_format)


@dataclass
class ConventionsRegistry:
    """The ``cce_file_conventions`` answers of every plugin, pooled, plus the problems of those left out."""

    tests: list[str] = field(default_factory=list)
    generated: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    def add(self, answer: FileConventions) -> None:
        self.tests.extend(p for p in answer.tests if p not in self.tests)
        self.generated.extend(p for p in answer.generated if p not in self.generated)

    def pooled(self) -> FileConventions:
        return FileConventions(tests=tuple(self.tests), generated=tuple(self.generated))


@dataclass
class _Candidate:
    """A plugin about to be registered, with what the host records about it."""

    plugin: Any
    name: str | None  # the name pluggy registers it under; None lets pluggy choose
    distribution: str
    label: str  # how hook-name problems name it
    position: int  # its place in the host's order, which orders the problems too
    # The entry point (or built-in) it was loaded as; None for a plugin handed to the host.
    entry_point: str | None


class PluginHost:
    """One process's view of the installed plugins.

    The host's order (see :class:`~cce_core.hookspecs.CceHookSpecs`): the
    core's built-in plugins, then the ``cce`` entry points sorted by name, then
    the ``plugins`` handed in, in the order given. pluggy calls the plugin
    registered last first, so they are registered in reverse and every hook
    — the collected ones, which the host calls one by one, and the
    first-result ones, which pluggy calls — sees them in that order within
    each ``tryfirst`` / unmarked / ``trylast`` group. A plugin added later
    with :meth:`register_plugin` is called before all of them in its group.

    ``entry_points=False`` makes a host of exactly the ``plugins`` handed in
    (no built-ins either); ``only`` limits the built-ins and entry points
    loaded to those names.
    """

    def __init__(self, plugins: Iterable[tuple[Any, str]] = (), *, entry_points: bool = True,
                 only: Iterable[str] | None = None) -> None:
        self.pm = pluggy.PluginManager(PROJECT_NAME)
        self.pm.add_hookspecs(CceHookSpecs)
        self.load_failures: list[PluginLoadFailure] = []
        # Hooks that would never be called (misspelled or unmarked): warned about, fatal only to --validate.
        self.hook_problems: list[str] = []
        # Embedder name -> the distribution that registered it, and name clashes (filled when
        # ``embedders`` is built).
        self.embedder_distributions: dict[str, str] = {}
        self.embedder_problems: list[str] = []
        # Registration hooks that raised, by hook name.
        self.registration_failures: dict[str, list[PluginLoadFailure]] = {}
        self._plugin_dist: dict[int, str] = {}
        self._dist_versions: dict[str, str] = {}  # as the entry-point records give them
        wanted = set(only) if only is not None else None
        candidates: list[_Candidate] = []
        failures: list[tuple[int, PluginLoadFailure]] = []
        if entry_points:
            candidates = self._builtins(wanted)
            found, failures = self._discover(wanted, candidates)
            candidates += found
        for plugin, dist in plugins:
            candidates.append(_Candidate(plugin, None, dist, _plugin_label(plugin, dist), len(candidates), None))
        failures += self._register_in_reverse(candidates)
        self.load_failures.extend(failure for _, failure in sorted(failures, key=lambda item: item[0]))

    def register_plugin(self, plugin: Any, distribution: str = "") -> None:
        """Add ``plugin`` after construction: pluggy calls it before the others of its marker group."""
        self.pm.register(plugin)
        self.hook_problems.extend(hook_name_problems(plugin, _plugin_label(plugin, distribution)))
        self._plugin_dist[id(plugin)] = distribution
        self.__dict__.pop("packs", None)
        self.__dict__.pop("embedders", None)
        self.__dict__.pop("document_chunkers", None)
        self.__dict__.pop("file_conventions", None)

    def _builtins(self, only: set[str] | None) -> list[_Candidate]:
        """The core's own plugins, imported by module path: present even when nothing is pip-installed."""
        import importlib

        from cce_core import __version__
        from cce_core.default_plugins import BUILTIN_DISTRIBUTION, BUILTIN_PLUGINS

        found: list[_Candidate] = []
        for name, module in BUILTIN_PLUGINS.items():
            if only is None or name in only:
                found.append(_Candidate(importlib.import_module(module), name, BUILTIN_DISTRIBUTION,
                                        f"{name} ({BUILTIN_DISTRIBUTION})", len(found), name))
        if found:
            self._dist_versions[BUILTIN_DISTRIBUTION] = __version__  # the running core, installed or not
        return found

    def _discover(self, only: set[str] | None,
                  builtins: list[_Candidate]) -> tuple[list[_Candidate], list[tuple[int, PluginLoadFailure]]]:
        from cce_core.plugins.entry_points import entry_points

        records = entry_points(ENTRY_POINT_GROUP)
        found, failures = self._load_records(records, only, builtins)
        if failures:
            # A failure may only mean the cached list is stale: ask the environment itself once.
            fresh = entry_points(ENTRY_POINT_GROUP, refresh=True)
            if fresh != records:
                found, failures = self._load_records(fresh, only, builtins)
        return found, failures

    def _load_records(self, records: list[Any], only: set[str] | None, builtins: list[_Candidate]
                      ) -> tuple[list[_Candidate], list[tuple[int, PluginLoadFailure]]]:
        """Import the entry points, sorted by name so which pack wins a clash never depends on install order."""
        found: list[_Candidate] = []
        failures: list[tuple[int, PluginLoadFailure]] = []
        taken = {c.name for c in builtins}
        loaded = {id(c.plugin) for c in builtins}
        versions: dict[str, str] = {}
        for position, ep in enumerate(sorted(records, key=lambda e: (e.name, e.value)), start=len(builtins)):
            if only is not None and ep.name not in only:
                continue
            dist = ep.distribution
            try:
                plugin = ep.load()
            except Exception as exc:  # any import-time failure of third-party code
                failures.append((position, PluginLoadFailure(ep.name, dist, f"{type(exc).__name__}: {exc}")))
                continue
            if id(plugin) in loaded:
                continue  # the same module advertised twice, or a built-in the core also advertises
            loaded.add(id(plugin))
            # Two distributions may reuse an entry-point name; keep both so the
            # usual clash checks see them instead of one silently vanishing.
            name = ep.name if ep.name not in taken else f"{ep.name}[{dist}]"
            taken.add(name)
            found.append(_Candidate(plugin, name, dist, f"{ep.name} ({dist})", position, ep.name))
            if dist != "?":
                versions[dist] = ep.version
        for dist, version in versions.items():
            self._dist_versions.setdefault(dist, version)
        return found, failures

    def _register_in_reverse(self, candidates: list[_Candidate]) -> list[tuple[int, PluginLoadFailure]]:
        """Register so that pluggy, which calls the last registered first, calls ``candidates`` in order.

        pluggy's rejection of an entry point (a parameter the hook does not
        have) is that plugin's load failure; a plugin handed in directly is
        the caller's, and its rejection raises.
        """
        failures: list[tuple[int, PluginLoadFailure]] = []
        registered: list[_Candidate] = []
        for candidate in reversed(candidates):
            try:
                self.pm.register(candidate.plugin, name=candidate.name)
            except Exception as exc:  # pluggy's validation of third-party code
                if candidate.entry_point is None:
                    raise
                failures.append((candidate.position, PluginLoadFailure(candidate.entry_point, candidate.distribution,
                                                                       f"{type(exc).__name__}: {exc}")))
                continue
            self._plugin_dist[id(candidate.plugin)] = candidate.distribution
            registered.append(candidate)
        for candidate in reversed(registered):  # problems in the host's order
            self.hook_problems.extend(hook_name_problems(candidate.plugin, candidate.label))
        return failures

    # -- registries ---------------------------------------------------------

    def _hook_with_dist(self, hook_name: str, make_register: Callable[[str], Callable[..., None]]) -> None:
        """Call every implementation of a registration hook, each with a ``register`` bound to its distribution.

        An implementation that raises is recorded as that plugin's failure (a
        start-up problem naming it), never a traceback; what it registered
        before raising stays registered.
        """
        hook = getattr(self.pm.hook, hook_name)
        failures = self.registration_failures[hook_name] = []  # a rebuilt registry reports afresh
        for impl in _call_order(hook):
            dist = self._plugin_dist.get(id(impl.plugin), "")
            register = make_register(dist)
            try:
                # By keyword, as pluggy would: an implementation may leave the parameter out.
                impl.function(**{name: register for name in impl.argnames})
            except Exception as exc:  # third-party code: report it, keep the engine's own message
                name = self.pm.get_name(impl.plugin) or _plugin_label(impl.plugin, "")
                failures.append(PluginLoadFailure(str(name), dist or "?", f"{hook_name} raised "
                                                  f"{type(exc).__name__}: {exc}", "failed while registering"))

    @cached_property
    def packs(self) -> PackRegistry:
        registry = PackRegistry()

        def make_register(dist: str) -> Callable[[LanguagePack], None]:
            def register(pack: LanguagePack) -> None:
                registry.register(replace(pack, distribution=dist) if dist and not pack.distribution else pack)

            return register

        self._hook_with_dist("cce_register_packs", make_register)
        return registry

    @cached_property
    def embedders(self) -> dict[str, Callable[[], Embedder]]:
        found: dict[str, Callable[[], Embedder]] = {}

        def make_register(dist: str) -> Callable[[str, Callable[[], Embedder]], None]:
            def register(name: str, factory: Callable[[], Embedder]) -> None:
                if name in found:
                    owner = self.embedder_distributions.get(name) or "?"
                    self.embedder_problems.append(
                        f'[embedder:{name}] name is already registered by distribution "{owner}" '
                        f'(registered again by "{dist or "?"}"); each embedder name must be unique.')
                    return
                found[name] = factory
                self.embedder_distributions[name] = dist

            return register

        self.embedder_problems.clear()
        self._hook_with_dist("cce_register_embedders", make_register)
        return found

    @cached_property
    def document_chunkers(self) -> DocumentChunkerRegistry:
        registry = DocumentChunkerRegistry()

        def make_register(dist: str) -> Callable[[DocumentChunker], None]:
            def register(chunker: DocumentChunker) -> None:
                if dist and isinstance(chunker, DocumentChunker) and not chunker.distribution:
                    # A frozen or slotted instance keeps its own (empty) value.
                    with contextlib.suppress(Exception):
                        chunker.distribution = dist
                registry.register(chunker)

            return register

        self._hook_with_dist("cce_register_document_chunkers", make_register)
        return registry

    @cached_property
    def file_conventions(self) -> ConventionsRegistry:
        """Every plugin's test and generated-file conventions, pooled; a bad answer is left out and recorded."""
        registry = ConventionsRegistry()
        for impl in _call_order(self.pm.hook.cce_file_conventions):
            name = self.pm.get_name(impl.plugin) or _plugin_label(impl.plugin, "")
            dist = self._plugin_dist.get(id(impl.plugin), "")
            label = f"[plugin:{name}{f' ({dist})' if dist else ''}]"
            try:
                answer = impl.function()
            except Exception as exc:  # third-party code: its conventions are left out, the ranking goes on
                registry.problems.append(f"{label} cce_file_conventions raised {type(exc).__name__}: {exc}")
                continue
            problems = file_conventions_problems(answer, label)
            if problems:
                registry.problems.extend(problems)
            elif isinstance(answer, FileConventions):  # else None: the plugin declares nothing
                registry.add(answer)
        return registry

    def advisory_problems(self) -> list[str]:
        """Problems that fail ``cce packs --validate`` but not the engine: hooks never called, bad conventions."""
        return [*self.hook_problems, *self.file_conventions.problems]

    def document_chunker_for(self, format_name: str) -> DocumentChunker | None:
        """The chunker registered for ``format_name`` (e.g. ``"markdown"``), or ``None``."""
        return self.document_chunkers.for_format(format_name)

    def startup_problems(self) -> list[str]:
        """Load failures, failing registrations and clashes: reasons not to run the engine."""
        clashes = list(self.packs.problems)
        _ = self.embedders  # builds the registry, recording embedder name clashes
        clashes += self.embedder_problems
        clashes += self.document_chunkers.problems
        failures = [*self.load_failures, *(f for fs in self.registration_failures.values() for f in fs)]
        return [f.describe() for f in failures] + clashes

    def require_healthy(self) -> None:
        problems = self.startup_problems()
        if problems:
            more = f" (and {len(problems) - 1} more; run `cce packs --validate`)" if len(problems) > 1 else ""
            raise CceError(problems[0] + more)

    def embedder(self, name: str) -> Embedder:
        """A new instance of embedder ``name``; it must subclass :class:`~cce_core.hookspecs.Embedder`."""
        factory = self.embedders.get(name)
        if factory is None:
            known = ", ".join(sorted(self.embedders)) or "none installed"
            raise CceError(f'unknown embedder "{name}" (available: {known})')
        made = factory()
        if not isinstance(made, Embedder):
            raise CceError(f'the "{name}" embedder ({type(made).__module__}.{type(made).__qualname__}) does not '
                           "subclass cce_core.api.Embedder — the engine relies on what that class declares")
        return made

    def ready_embedder(self, name: str, purpose: str) -> Embedder:
        """Embedder ``name``, refused with its own message when it is not healthy.

        ``purpose`` is ``"index"`` or ``"search"`` (see :meth:`Embedder.unavailable_message`).
        """
        made = self.embedder(name)
        if not made.healthy():
            raise CceError(made.unavailable_message(purpose))
        return made

    def extract_imports(self, pack: LanguagePack, root: Any, source: bytes, *, use_hooks: bool = True,
                        import_nodes: list[Any] | None = None) -> list[str]:
        """A file's imports: a plugin's ``cce_extract_imports`` answer first, else the pack's own rule.

        ``import_nodes`` are the file's import nodes in start-byte order, when the
        chunker has already captured them; a pack with ``imports_from_nodes``
        then reads those instead of querying the tree a second time.
        """
        if use_hooks:
            try:
                override = self.pm.hook.cce_extract_imports(language=pack.name, root=root, source=source)
                if override is not None:
                    return [str(name) for name in override]
            except Exception:  # a failing override must not cost the file its imports: the pack's rule applies
                pass
        try:
            if import_nodes is not None and pack.imports_from_nodes is not None:
                return pack.imports_from_nodes(import_nodes, source)
            return pack.extract_imports(root, source)
        except Exception:  # import extraction must never break indexing
            return []

    def plugin_versions(self) -> dict[str, str]:
        """Every plugin distribution loaded, with its version, sorted by name."""
        return {dist: self.distribution_version(dist)
                for dist in sorted({d for d in self._plugin_dist.values() if d and d != "?"})}

    def distribution_version(self, dist: str) -> str:
        """The installed version of ``dist`` ("?" when it is not installed)."""
        known = self._dist_versions.get(dist)
        if known is not None:
            return known
        from importlib.metadata import PackageNotFoundError, version

        try:
            found = version(dist)
        except PackageNotFoundError:
            found = "?"
        self._dist_versions[dist] = found
        return found

    def distribution_of(self, plugin: Any) -> str:
        return self._plugin_dist.get(id(plugin), "")


_default_host: PluginHost | None = None


def existing_default_host() -> PluginHost | None:
    """The process-wide host when something has built it already, else ``None`` (nothing is loaded)."""
    return _default_host


def host_for_embedder(name: str) -> PluginHost:
    """A host with just the plugin that provides embedder ``name``, when it can be found cheaply.

    Searching needs no language pack, so loading only the entry point named
    like the embedder (the convention the bundled embedders follow) saves
    start-up time; anything else falls back to full discovery.
    """
    if _default_host is not None:
        return _default_host
    host = PluginHost(only={name})
    if name in host.embedders and not host.load_failures:
        return host
    return default_host()


def embedder_dim(name: str) -> int:
    """The vector width embedder ``name`` declares (0 when it declares none), asked of the plugin providing it."""
    return int(host_for_embedder(name).embedder(name).dim or 0)


def default_host() -> PluginHost:
    """The process-wide host built from installed entry points."""
    global _default_host
    if _default_host is None:
        _default_host = PluginHost()
    return _default_host


def document_chunker_for(format_name: str, host: PluginHost | None = None) -> DocumentChunker | None:
    """The installed document chunker for ``format_name`` (``"markdown"``), or ``None`` when none is installed.

    ``host`` defaults to the process-wide :func:`default_host`. On ``None``,
    tell the user :func:`missing_document_chunker_message`.
    """
    return (host or default_host()).document_chunker_for(format_name)


def document_chunkers(host: PluginHost | None = None) -> list[DocumentChunker]:
    """Every registered document chunker, in registration order."""
    return list((host or default_host()).document_chunkers.chunkers)


def missing_document_chunker_message(format_name: str) -> str:
    """What to tell a user when no document chunker answers for ``format_name``: the distribution to install."""
    return (f"no document chunker for {format_name} is installed — install one, e.g. "
            f"`pip install cce-pack-{format_name}`")
