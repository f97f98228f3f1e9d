"""Issue localization: does the engine find the files a real fix changed, given the issue's text?

This is the workload the retrieval literature publishes numbers for (file
level on SWE-bench Lite in SweRank and LocAgent), so it is the one place our
ranking can be set beside theirs. A ``cce.localization/v1`` set names, per
case, a repository, the commit the fix was made against, the issue text and
the non-test files the merged fix changed. For every (repository, commit) the
tree is written from the repository's git objects into a cache directory,
indexed in memory the way ``cce relevance --dir`` indexes a corpus, and every
case of that commit is asked once per ranking profile. Files are ranked by
their best chunk (the order in which they first appear in the results).

Two baselines are computed in the same run from the same trees: plain BM25
over whole code files (k1 = 1.2, b = 0.75, the engine's tokenizer), once with
every code file and once without test files. Scores: Acc@k (every expected
file within the first k, as SweRank's and LocAgent's evaluation code count
it), Hit@k (at least one), and MRR@10; a paired t-test over the per-case
reciprocal ranks compares each profile with ``family`` and with the BM25
baseline without tests. The report is pure: no clock, the same bytes for the
same trees.
"""

from __future__ import annotations

import fnmatch
import json
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cce_core.evaluation.paired_stats import PairedStats, paired_t
from cce_core.foundation.errors import CceError
from cce_core.foundation.json_lines import json_objects
from cce_core.foundation.textrules import UNICODE_WHITESPACE, format6, plain_sum, split_lines

if TYPE_CHECKING:
    from cce_core.hookspecs import Embedder
    from cce_core.indexing.store import StoreData
    from cce_core.plugins.host import PluginHost
    from cce_core.retrieval.searcher import Searcher

SCHEMA = "cce.localization/v1"
REPORT_SCHEMA = "cce.localization.report/v1"
KS = (1, 3, 5, 10)
MRR_K = 10
SEARCH_TOP_K = 50  # chunks asked of the engine per case; the per-file cap leaves at least 17 files
TOP_FILES_SHOWN = 10
DEFAULT_REPOS_DIR = "/work/.mirror"
BASELINE_ALL = "bm25-files"
BASELINE_NO_TESTS = "bm25-files-no-tests"
REFERENCE_PROFILE = "family"

# A test file, for the baseline without tests (and nowhere else): a directory named like a test
# directory, or a file named like a test.
TEST_DIRECTORIES = frozenset({"test", "tests", "spec", "__tests__"})
TEST_FILE_PATTERNS = ("test_*", "*_test.*", "*.test.*", "*.spec.*", "*Test.java")

_REPO_PART = re.compile(r"[A-Za-z0-9_.-]+")
_COMMIT = re.compile(r"[0-9a-fA-F]{7,64}")
_CASE_FIELDS = ("id", "repo", "base_commit", "language", "query", "expected")


# --------------------------------------------------------------------------- the case file


@dataclass(frozen=True, slots=True)
class LocalizationCase:
    id: str
    repo: str  # "owner/name"
    base_commit: str
    language: str
    query: str  # the issue text, verbatim
    expected: tuple[str, ...]  # repository-relative paths of the files the fix changed


@dataclass(frozen=True, slots=True)
class LocalizationSet:
    sources: tuple[str, ...]  # each header's "source", in file order
    cases: tuple[LocalizationCase, ...]


def _first_object(text: str) -> Any:
    for line in split_lines(text):
        if line.strip(UNICODE_WHITESPACE):
            try:
                return json.loads(line)
            except ValueError:
                return None
    return None


def is_localization_text(text: str) -> bool:
    """Whether the first non-blank line is a header naming :data:`SCHEMA`."""
    head = _first_object(text)
    return isinstance(head, dict) and head.get("schema") == SCHEMA


def is_localization_input(path: str) -> bool:
    """Whether ``path`` is a localization set: a directory, or a file whose header names :data:`SCHEMA`.

    An unreadable file is not one (the caller's own reader reports it).
    """
    if os.path.isdir(path):
        return True
    try:
        with open(path, "rb") as fh:
            head = fh.read(1 << 16)
    except OSError:
        return False
    return is_localization_text(head.decode("utf-8", "replace"))


def parse_cases(text: str, where: str = "localization set") -> LocalizationSet:
    """One ``cce.localization/v1`` file; a CceError names the file, the line and what is wrong."""
    source: str | None = None
    cases: list[LocalizationCase] = []
    seen: set[str] = set()
    for _lineno, at, value in json_objects(text, where):
        if source is None:
            if value.get("schema") != SCHEMA:
                raise CceError(f"{at}: the first line must be the header "
                               f'{{"schema":"{SCHEMA}","source":"..."}} (found schema {value.get("schema")!r})')
            header_source = value.get("source")
            if not isinstance(header_source, str) or not header_source.strip(UNICODE_WHITESPACE):
                raise CceError(f'{at}: the header needs a non-empty "source" (dataset, where it was found, licence)')
            source = header_source
            continue
        case = _parse_case(value, at)
        if case.id in seen:
            raise CceError(f"{at}: duplicate case id {case.id!r}")
        seen.add(case.id)
        cases.append(case)
    if source is None:
        raise CceError(f"{where} is empty: expected a {SCHEMA} header line and cases")
    if not cases:
        raise CceError(f"{where} contains no cases")
    return LocalizationSet((source,), tuple(cases))


def _string(value: dict[str, Any], key: str, at: str) -> str:
    got = value.get(key)
    if not isinstance(got, str) or not got.strip(UNICODE_WHITESPACE):
        raise CceError(f'{at}: "{key}" must be a non-empty string')
    return got


def _parse_case(value: dict[str, Any], at: str) -> LocalizationCase:
    unknown = sorted(set(value) - set(_CASE_FIELDS))
    if unknown:
        raise CceError(f"{at}: unknown field {unknown[0]!r} (a case has {', '.join(_CASE_FIELDS)})")
    case_id, repo, commit = _string(value, "id", at), _string(value, "repo", at), _string(value, "base_commit", at)
    owner, slash, name = repo.partition("/")
    if not slash or not all(_REPO_PART.fullmatch(p) and p not in (".", "..") for p in (owner, name)):
        raise CceError(f'{at}: "repo" must be "owner/name" (got {repo!r})')
    if not _COMMIT.fullmatch(commit):
        raise CceError(f'{at}: "base_commit" must be a hexadecimal commit id (got {commit!r})')
    expected = value.get("expected")
    if (not isinstance(expected, list) or not expected
            or not all(isinstance(p, str) and _safe_relative(p) for p in expected)):
        raise CceError(f'{at}: "expected" must be a non-empty array of repository-relative paths')
    return LocalizationCase(case_id, repo, commit.lower(), _string(value, "language", at), _string(value, "query", at),
                            tuple(dict.fromkeys(expected)))


def _safe_relative(path: str) -> bool:
    parts = path.split("/")
    return bool(path) and all(p not in ("", ".", "..") for p in parts)


def read_sets(paths: Sequence[str]) -> LocalizationSet:
    """The cases of localization files, a directory standing for its ``*.jsonl`` files (name order)."""
    files: list[str] = []
    for path in paths:
        if os.path.isdir(path):
            found = sorted(str(p) for p in Path(path).glob("*.jsonl"))
            if not found:
                raise CceError(f"no *.jsonl localization sets in {path}")
            files.extend(found)
        else:
            files.append(path)
    sources: list[str] = []
    cases: list[LocalizationCase] = []
    ids: set[str] = set()
    for file in files:
        try:
            text = Path(file).read_bytes().decode("utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise CceError(f"could not read localization set {file}: {exc}") from None
        one = parse_cases(text, file)
        for case in one.cases:
            if case.id in ids:
                raise CceError(f"{file}: case id {case.id!r} also appears in an earlier file")
            ids.add(case.id)
        sources.extend(one.sources)
        cases.extend(one.cases)
    return LocalizationSet(tuple(sources), tuple(cases))


# --------------------------------------------------------------------------- repositories and trees


def _git(git_dir: str, *args: str) -> subprocess.CompletedProcess[bytes]:
    try:
        return subprocess.run(["git", "--git-dir", git_dir, *args], capture_output=True, check=False)
    except FileNotFoundError:
        raise CceError("git is not installed: the localization runner reads trees from git repositories") from None


def find_git_dir(repos_dir: str, repo: str) -> str:
    """The git directory of ``owner/name`` under ``repos_dir``: ``<owner>+<name>/repo`` or ``<owner>+<name>``.

    Either may be a bare repository or a work tree with ``.git``.
    """
    folder = os.path.join(repos_dir, repo.replace("/", "+"))
    for candidate in (os.path.join(folder, "repo"), folder):
        if os.path.isfile(os.path.join(candidate, "HEAD")) and os.path.isdir(os.path.join(candidate, "objects")):
            return candidate
        if os.path.exists(os.path.join(candidate, ".git")):
            done = subprocess.run(["git", "-C", candidate, "rev-parse", "--absolute-git-dir"], capture_output=True,
                                  text=True, check=False)
            if done.returncode == 0 and done.stdout.strip():
                return done.stdout.strip()
    raise CceError(f"repository {repo} not found: expected a git directory at {folder}/repo or {folder} "
                   "(pass --repos DIR)")


def resolve_commit(git_dir: str, repo: str, commit: str) -> str:
    """The full id of ``commit`` in ``git_dir``; a CceError when the repository does not have it."""
    done = _git(git_dir, "rev-parse", "--verify", "--quiet", f"{commit}^{{commit}}")
    full = done.stdout.decode("ascii", "replace").strip()
    if done.returncode != 0 or not full:
        raise CceError(f"commit {commit} of {repo} is not in {git_dir} (fetch the repository's full history)")
    return full


def default_cache_dir() -> Path:
    """``<cce cache>/localization``: the cache root cce's plugin cache uses (CCE_CACHE_DIR, XDG, ~/.cache)."""
    configured = os.environ.get("CCE_CACHE_DIR")
    if configured:
        return Path(configured) / "localization"
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "cce" / "localization"


def _tree_entries(git_dir: str, commit: str) -> list[tuple[bytes, bytes]]:
    """(path, blob id) of every regular file of the commit's tree; links and submodules are not files."""
    done = _git(git_dir, "ls-tree", "-r", "-z", "--full-tree", commit)
    if done.returncode != 0:
        raise CceError(f"could not list the tree of {commit} in {git_dir}: "
                       f"{done.stderr.decode('utf-8', 'replace').strip()}")
    entries: list[tuple[bytes, bytes]] = []
    for record in done.stdout.split(b"\0"):
        meta, tab, path = record.partition(b"\t")
        if not tab:
            continue
        mode, kind, oid = meta.split(b" ")
        parts = path.split(b"/")
        if kind != b"blob" or mode not in (b"100644", b"100755"):
            continue
        if any(p in (b"", b".", b"..") or p.lower() == b".git" for p in parts):
            continue  # never write outside the tree, nor a .git of its own
        entries.append((path, oid))
    return entries


def write_tree(git_dir: str, commit: str, dest: str) -> int:
    """Write the commit's files under ``dest`` exactly as stored; the number of files written.

    Blob by blob rather than ``git archive``: an archive applies the tree's
    ``export-ignore`` and ``export-subst`` attributes (jq's drops its
    ``.gitignore``, xarray's rewrites ``_version.py``), so it is not the tree
    a checkout sees.
    """
    entries = _tree_entries(git_dir, commit)
    proc = subprocess.Popen(["git", "--git-dir", git_dir, "cat-file", "--batch"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert proc.stdin is not None and proc.stdout is not None
    root = os.fsencode(dest)
    made: set[bytes] = set()
    try:
        for path, oid in entries:
            proc.stdin.write(oid + b"\n")
            proc.stdin.flush()
            header = proc.stdout.readline().split()
            if len(header) != 3 or header[1] != b"blob":
                raise CceError(f"git cat-file could not read blob {oid.decode('ascii', 'replace')} of {commit}")
            size = int(header[2])
            data = proc.stdout.read(size)
            proc.stdout.read(1)  # the newline after each object
            target = os.path.join(root, path)
            parent = os.path.dirname(target)
            if parent not in made:
                os.makedirs(parent, exist_ok=True)
                made.add(parent)
            with open(target, "wb") as fh:
                fh.write(data)
    finally:
        proc.stdin.close()
        proc.stdout.close()
        proc.wait()
    return len(entries)


def materialise(git_dir: str, repo: str, commit: str, cache_dir: Path) -> Path:
    """The tree of ``repo`` at ``commit`` (a full id) under ``cache_dir``, written once.

    The files go into a hidden temporary directory beside the final one, which
    is renamed into place only when complete: a run that dies half-way leaves
    no directory a later run would mistake for a whole tree.
    """
    final = cache_dir / f"{repo.replace('/', '+')}@{commit}"
    if final.is_dir():
        return final
    cache_dir.mkdir(parents=True, exist_ok=True)
    temp = tempfile.mkdtemp(prefix=f".{final.name}.", suffix=".tmp", dir=cache_dir)
    try:
        write_tree(git_dir, commit, temp)
        try:
            os.rename(temp, final)
        except OSError:
            if not final.is_dir():  # not another run's finished copy: a real failure
                raise
            shutil.rmtree(temp, ignore_errors=True)
    except BaseException:
        shutil.rmtree(temp, ignore_errors=True)
        raise
    return final


# --------------------------------------------------------------------------- ranking profiles


def installed_profiles() -> tuple[str, ...]:
    """The ranking profiles this engine has; a single ``family`` where profiles do not exist yet."""
    try:
        from cce_core.retrieval.profiles import PROFILE_NAMES  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        return (REFERENCE_PROFILE,)
    return tuple(PROFILE_NAMES)


def parse_profiles(text: str | None) -> tuple[str, ...]:
    """``--ranking a,b``: the profiles to score, in the order given (default: every installed one)."""
    installed = installed_profiles()
    if text is None:
        return installed
    chosen: list[str] = []
    for part in text.split(","):
        name = part.strip(UNICODE_WHITESPACE)
        if not name:
            continue
        if name not in installed:
            raise CceError(f"unknown ranking profile {name!r} (installed: {', '.join(installed)})")
        if name not in chosen:
            chosen.append(name)
    if not chosen:
        raise CceError(f"--ranking needs at least one profile (installed: {', '.join(installed)})")
    return tuple(chosen)


def profile_searcher(store: StoreData, embedder: Embedder, profile: str) -> Searcher:
    """A searcher ranking with ``profile``; before profiles existed the one ranking is ``family``."""
    import inspect

    from cce_core.retrieval.searcher import Searcher

    if "profile" in inspect.signature(Searcher).parameters:
        return Searcher(store, embedder, profile=profile)  # type: ignore[call-arg,unused-ignore]
    return Searcher(store, embedder)


# --------------------------------------------------------------------------- rankings


def is_test_path(path: str) -> bool:
    """A test file by its path: a test directory on the way, or a test-like file name."""
    *dirs, name = path.split("/")
    if any(d in TEST_DIRECTORIES for d in dirs):
        return True
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in TEST_FILE_PATTERNS)


def files_in_order(paths: Iterable[str]) -> list[str]:
    """Each path once, where it first appears."""
    return list(dict.fromkeys(paths))


def engine_ranking(searcher: Searcher, query: str) -> list[str]:
    """Files by their best chunk in the engine's own search (graph expansion off)."""
    results = searcher.search(query, top_k=SEARCH_TOP_K, graph=False)
    return files_in_order(r.chunk.file_path for r in results)


@dataclass
class WholeFileBm25:
    """BM25 over whole files (k1 = 1.2, b = 0.75 on the engine's tokenizer); each file one document."""

    paths: list[str]
    _arrays: Any = field(default=None, repr=False)

    @classmethod
    def build(cls, files: Sequence[tuple[str, bytes]]) -> WholeFileBm25:
        from cce_core.foundation.textrules import tokenize_bytes
        from cce_core.indexing.bm25 import build_bm25

        return cls([p for p, _ in files], build_bm25([tokenize_bytes(raw) for _, raw in files]))

    def rank(self, query: str) -> list[str]:
        """Files with a positive score, best first; ties by path."""
        from cce_core.foundation.textrules import score_key, tokenize
        from cce_core.indexing.bm25 import bm25_scores, unique_in_order

        if not self.paths:
            return []
        scores = bm25_scores(self._arrays, unique_in_order(tokenize(query)))
        scored = [(float(s), p) for s, p in zip(scores.tolist(), self.paths, strict=True) if s > 0.0]
        scored.sort(key=lambda item: (-score_key(item[0]), item[1]))
        return [p for _, p in scored]


def code_files(root: str, host: PluginHost) -> list[tuple[str, bytes]]:
    """(path, bytes) of every file the walker indexes that a language pack claims (documents are not code)."""
    from cce_core.indexing.walker import walk

    return [(wf.path, wf.raw) for wf in walk(root, protect_secrets=True).files
            if host.packs.pack_for(wf.path) is not None]


# --------------------------------------------------------------------------- scoring


@dataclass(frozen=True, slots=True)
class CaseScore:
    first_rank: int | None  # 1-based rank of the first expected file, anywhere in the ranking
    acc: tuple[bool, ...]  # per KS: every expected file within the first k
    hit: tuple[bool, ...]  # per KS: at least one expected file within the first k
    rr: float  # reciprocal rank of the first expected file within MRR_K, else 0
    top: tuple[str, ...]  # the first TOP_FILES_SHOWN files


def score_case(ranked: Sequence[str], expected: Sequence[str]) -> CaseScore:
    """File-level Acc@k, Hit@k and RR@10 of one ranking against the expected files."""
    wanted = set(expected)
    first = next((i for i, path in enumerate(ranked, start=1) if path in wanted), None)
    acc = tuple(wanted.issubset(ranked[:k]) for k in KS)
    hit = tuple(first is not None and first <= k for k in KS)
    rr = 1.0 / first if first is not None and first <= MRR_K else 0.0
    return CaseScore(first, acc, hit, rr, tuple(ranked[:TOP_FILES_SHOWN]))


@dataclass(frozen=True, slots=True)
class Aggregate:
    cases: int
    acc: tuple[float, ...]  # per KS
    hit: tuple[float, ...]
    mrr: float


def aggregate(scores: Sequence[CaseScore]) -> Aggregate:
    """Macro means over cases (each case weighs the same)."""
    n = len(scores)

    def mean(values: Iterable[float]) -> float:
        return plain_sum(values) / n if n else 0.0

    return Aggregate(n, tuple(mean(1.0 if s.acc[i] else 0.0 for s in scores) for i in range(len(KS))),
                     tuple(mean(1.0 if s.hit[i] else 0.0 for s in scores) for i in range(len(KS))),
                     mean(s.rr for s in scores))


@dataclass(frozen=True, slots=True)
class CaseResult:
    case: LocalizationCase
    unindexed: tuple[str, ...]  # expected files the walker did not index (no ranking can find them)
    scores: dict[str, CaseScore]  # ranker name -> score


@dataclass(frozen=True, slots=True)
class Comparison:
    a: str
    b: str
    stats: PairedStats  # over RR@10, b - a


@dataclass(frozen=True, slots=True)
class LocalizationReport:
    sources: tuple[str, ...]
    embedder: str
    profiles: tuple[str, ...]
    rankers: tuple[str, ...]
    results: tuple[CaseResult, ...]
    comparisons: tuple[Comparison, ...]

    def scores_of(self, ranker: str, language: str | None = None) -> list[CaseScore]:
        return [r.scores[ranker] for r in self.results if language is None or r.case.language == language]

    def languages(self) -> list[str]:
        return sorted({r.case.language for r in self.results})


def rankers_for(profiles: Sequence[str]) -> tuple[str, ...]:
    return (*profiles, BASELINE_ALL, BASELINE_NO_TESTS)


def compare(results: Sequence[CaseResult], profiles: Sequence[str]) -> tuple[Comparison, ...]:
    """Each profile against ``family`` (when both were scored) and against BM25 without tests, on RR@10."""
    pairs: list[tuple[str, str]] = []
    for profile in profiles:
        if profile != REFERENCE_PROFILE and REFERENCE_PROFILE in profiles:
            pairs.append((REFERENCE_PROFILE, profile))
        pairs.append((BASELINE_NO_TESTS, profile))
    return tuple(Comparison(a, b, paired_t([r.scores[b].rr - r.scores[a].rr for r in results])) for a, b in pairs)


# --------------------------------------------------------------------------- the run


def _group_by_tree(cases: Sequence[LocalizationCase]) -> dict[tuple[str, str], list[LocalizationCase]]:
    groups: dict[tuple[str, str], list[LocalizationCase]] = {}
    for case in cases:
        groups.setdefault((case.repo, case.base_commit), []).append(case)
    return groups


def prepare_trees(cases: Sequence[LocalizationCase], repos_dir: str) -> dict[tuple[str, str], tuple[str, str]]:
    """(repo, commit) -> (git dir, full commit id) for every tree, all checked before anything is indexed."""
    located: dict[str, str] = {}
    resolved: dict[tuple[str, str], tuple[str, str]] = {}
    for repo, commit in _group_by_tree(cases):
        if repo not in located:
            located[repo] = find_git_dir(repos_dir, repo)
        resolved[(repo, commit)] = (located[repo], resolve_commit(located[repo], repo, commit))
    return resolved


def evaluate(case_set: LocalizationSet, host: PluginHost, *, repos_dir: str = DEFAULT_REPOS_DIR,
             cache_dir: Path | None = None, profiles: Sequence[str] | None = None, embedder_name: str = "hash",
             progress: Callable[[str], None] | None = None) -> LocalizationReport:
    """Score every case with each profile and both baselines; one tree indexed at a time."""
    from cce_core.indexing.indexer import build_index

    chosen = tuple(profiles) if profiles is not None else installed_profiles()
    cache = cache_dir if cache_dir is not None else default_cache_dir()
    trees = prepare_trees(case_set.cases, repos_dir)
    embedder = host.embedder("hash") if embedder_name == "hash" else host.ready_embedder(embedder_name, "index")
    by_id: dict[str, CaseResult] = {}
    groups = _group_by_tree(case_set.cases)
    for number, ((repo, commit), cases) in enumerate(groups.items(), start=1):
        git_dir, full = trees[(repo, commit)]
        if progress is not None:
            progress(f"[{number}/{len(groups)}] {repo}@{full[:12]}: {len(cases)} case(s)")
        root = str(materialise(git_dir, repo, full, cache))
        store, _stats = build_index(root, host, embedder, protect_secrets=True)
        searchers = {p: profile_searcher(store, embedder, p) for p in chosen}
        indexed = {c.file_path for c in store.chunks}
        files = code_files(root, host)
        every = WholeFileBm25.build(files)
        no_tests = WholeFileBm25.build([f for f in files if not is_test_path(f[0])])
        for case in cases:
            rankings = {p: engine_ranking(searchers[p], case.query) for p in chosen}
            rankings[BASELINE_ALL] = every.rank(case.query)
            rankings[BASELINE_NO_TESTS] = no_tests.rank(case.query)
            by_id[case.id] = CaseResult(case, tuple(p for p in case.expected if p not in indexed),
                                        {name: score_case(r, case.expected) for name, r in rankings.items()})
        del store, searchers, every, no_tests
    results = tuple(by_id[c.id] for c in case_set.cases)
    return LocalizationReport(case_set.sources, embedder_name, chosen, rankers_for(chosen), results,
                              compare(results, chosen))


# --------------------------------------------------------------------------- reports


def _pct(x: float) -> str:
    return f"{x * 100:.1f}"


def _row(cells: Sequence[str], first: int = 22, width: int = 8) -> str:
    return f"  {cells[0]:<{first}}" + "".join(f"{c:>{width}}" for c in cells[1:]) + "\n"


def _signed(x: float) -> str:
    text = format6(x)
    return text if text.startswith("-") else f"+{text}"


def _metric_cells(agg: Aggregate) -> list[str]:
    return [*(_pct(a) for a in agg.acc), _pct(agg.mrr), _pct(agg.hit[0]), _pct(agg.hit[2])]


METRIC_HEADERS = (*(f"Acc@{k}" for k in KS), f"MRR@{MRR_K}", "Hit@1", "Hit@5")


def render_human(report: LocalizationReport) -> str:
    """The tables: overall, per language, then the paired t-tests (percentages, one decimal)."""
    n = len(report.results)
    by_language = {lang: sum(1 for r in report.results if r.case.language == lang) for lang in report.languages()}
    repos = len({r.case.repo for r in report.results})
    unindexed = sum(1 for r in report.results if r.unindexed)
    out = [
        f"CCE localization — file-level issue localization ({SCHEMA})\n",
        f"  cases   : {n} over {repos} repositories ("
        + ", ".join(f"{lang} {count}" for lang, count in by_language.items()) + ")\n",
        f"  embedder: {report.embedder}\n",
        f"  ranking : engine search top {SEARCH_TOP_K} chunks, graph off, files by best chunk; "
        f"baselines: BM25 over whole code files\n",
        "  Acc@k   : every expected file in the top k (SweRank/LocAgent); Hit@k: at least one\n",
    ]
    if unindexed:
        out.append(f"  note    : {unindexed} case(s) expect a file the walker does not index\n")
    out.append("\n" + _row(("ranker", *METRIC_HEADERS)))
    for ranker in report.rankers:
        out.append(_row((ranker, *_metric_cells(aggregate(report.scores_of(ranker))))))
    if len(by_language) > 1:
        out.append("\n  by language (Acc@1 / Acc@5 / MRR@10)\n")
        out.append(_row(("ranker", *by_language), width=20))
        for ranker in report.rankers:
            cells = []
            for lang in by_language:
                agg = aggregate(report.scores_of(ranker, lang))
                cells.append(f"{_pct(agg.acc[0])}/{_pct(agg.acc[2])}/{_pct(agg.mrr)}")
            out.append(_row((ranker, *cells), width=20))
    if report.comparisons:
        out.append(f"\n  paired t-test on RR@{MRR_K} (b − a; two-sided, n={n}, df={max(n - 1, 0)})\n")
        out.append(f"  {'a → b':<40}{'mean-delta':>12}{'t':>12}{'p':>12}{'95% CI':>26}\n")
        for c in report.comparisons:
            s = c.stats
            t = _signed(s.t) if s.t is not None else "n/a"
            p = format6(s.p) if s.p is not None else "n/a"
            ci = f"[{_signed(s.ci95[0])}, {_signed(s.ci95[1])}]" if s.ci95 is not None else "n/a"
            out.append(f"  {f'{c.a} → {c.b}':<40}{_signed(s.mean_delta):>12}{t:>12}{p:>12}{ci:>26}\n")
    return "".join(out)


def _aggregate_json(agg: Aggregate) -> dict[str, Any]:
    return {
        "acc": {str(k): format6(v) for k, v in zip(KS, agg.acc, strict=True)}, "cases": agg.cases,
        "hit": {str(k): format6(v) for k, v in zip(KS, agg.hit, strict=True)}, "mrr": format6(agg.mrr),
    }


def _stats_json(c: Comparison) -> dict[str, Any]:
    s = c.stats
    lo, hi = s.ci95 if s.ci95 is not None else (None, None)
    return {
        "a": c.a, "b": c.b, "ci95_high": _signed(hi) if hi is not None else None,
        "ci95_low": _signed(lo) if lo is not None else None, "mean_delta": _signed(s.mean_delta),
        "metric": f"rr@{MRR_K}", "n": s.n, "p": format6(s.p) if s.p is not None else None,
        "t": _signed(s.t) if s.t is not None else None,
    }


def render_json(report: LocalizationReport) -> str:
    """The ``cce.localization.report/v1`` document: keys sorted, rates as six-decimal strings, one newline."""
    rankers = []
    for ranker in report.rankers:
        body = _aggregate_json(aggregate(report.scores_of(ranker)))
        body["by_language"] = {lang: _aggregate_json(aggregate(report.scores_of(ranker, lang)))
                               for lang in report.languages()}
        body["name"] = ranker
        body["kind"] = "profile" if ranker in report.profiles else "baseline"
        rankers.append(body)
    per_case = []
    for r in report.results:
        c = r.case
        per_case.append({
            "base_commit": c.base_commit, "expected": list(c.expected), "id": c.id, "language": c.language,
            "repo": c.repo, "unindexed": list(r.unindexed),
            "rankers": {name: {"first_rank": s.first_rank, "rr": format6(s.rr), "top": list(s.top)}
                        for name, s in r.scores.items()},
        })
    document = {
        "acc_definition": "every expected file within the first k files", "cases": len(report.results),
        "compare": [_stats_json(c) for c in report.comparisons], "embedder": report.embedder,
        "hit_definition": "at least one expected file within the first k files", "k": list(KS),
        "mrr_k": MRR_K, "per_case": per_case, "profiles": list(report.profiles), "rankers": rankers,
        "schema": REPORT_SCHEMA, "search_top_k": SEARCH_TOP_K, "sources": list(report.sources),
    }
    return json.dumps(document, indent=2, ensure_ascii=False, sort_keys=True) + "\n"
