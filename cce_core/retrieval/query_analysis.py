"""What a query asks for, read once before ranking: identifiers, paths, filler, intent.

Agents send three kinds of text: a bare identifier (``register_blueprint``,
``ZodObject.extend``), a question in words, and a pasted issue of several
hundred words with code, paths and stack frames inside. The family's pipeline
treats all three as a bag of tokens. The default profile reads them first:

- identifiers: snake_case, camelCase, dotted or ``::``-qualified names, calls
  (``name()``) and anything in backticks or quotes that looks like code; a
  query of one word that is not filler is taken as a name too;
- paths and stack frames (``src/app.py``, ``File "x.py", line 3, in run``);
- filler: common English words that carry no meaning in a code search, and
  the words of an issue template, so a 300-word text does not match
  everything;
- intent: whether the query itself asks for tests, docs, examples,
  benchmarks or configuration, which lifts the file-role penalty for them.

Nothing here names a language: the rules are about how code is written in
general (identifier shapes, path shapes), not about one grammar.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass, field

from cce_core.foundation.textrules import tokenize

# Common English words and issue-template words: no evidence about which code is meant.
_FILLER_WORDS_TEXT = """
a about above after again against all also am an and any are aren as at be because been before being below
between both but by can cannot could did didn do does doesn doing don down during each either else even ever
every few for from further get gets getting got had has have having he her here hers herself him himself his
how however i if in into is isn it its itself just let like ll me might more most much must my myself need
needs no nor not now of off on once only or other our ours ourselves out over own please re same see seems
shall she should so some such than that the their theirs them themselves then there these they this those
through to too under until up upon us use used uses using very via was wasn way we well were weren what when
where whether which while who whom why will with within without would you your yours yourself yourselves
one two also etc eg ie thanks thank hi hello issue bug problem expected actual behavior behaviour steps
reproduce version versions describe description happen happens happened output example work works working
want wanted able try tried trying think currently instead something anything way make makes made new
"""
FILLER_WORDS = frozenset(_FILLER_WORDS_TEXT.split())

# Words that ask for a file role the default ranking otherwise holds back (see file_roles).
ROLE_WORDS: dict[str, frozenset[str]] = {
    "test": frozenset({"test", "tests", "testing", "spec", "specs", "fixture", "fixtures", "unittest", "pytest",
                       "mock", "mocks"}),
    "docs": frozenset({"doc", "docs", "documentation", "documented", "readme", "guide", "tutorial", "changelog",
                       "manual", "docstring"}),
    "example": frozenset({"example", "examples", "sample", "samples", "demo", "demos", "tutorial"}),
    "bench": frozenset({"bench", "benchmark", "benchmarks", "benches", "perf", "performance"}),
    "config": frozenset({"config", "configuration", "settings", "yaml", "toml", "json", "ci", "workflow",
                         "dependency", "dependencies", "requirements", "lockfile", "package", "manifest"}),
    "style": frozenset({"css", "style", "styles", "stylesheet", "scss"}),
    "meta": frozenset({"license", "licence", "copyright", "changelog", "authors", "contributing"}),
}

_IDENTIFIER = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*(?:(?:\.|::|#|->)[A-Za-z_$][A-Za-z0-9_$]*)*(?:\(\))?")
_QUOTED = re.compile(r"`([^`\n]{1,200})`|'([^'\n]{1,120})'|\"([^\"\n]{1,120})\"")
_PATH = re.compile(r"(?:[A-Za-z0-9_.\-]+/)+[A-Za-z0-9_.\-]+|[A-Za-z0-9_\-]+\.[A-Za-z][A-Za-z0-9]{0,5}\b")
# A bare name typed with a trailing ``!`` or ``?`` (tokens drop the mark; a definition's header keeps it).
_SUFFIXED_NAME = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*[!?]")
_CAMEL = re.compile(r"[a-z0-9][A-Z]|[A-Z]{2}[a-z]")
# One word alone, not filler, is a name typed bare (``jsonify``, ``create``); two bare words
# ("builtin functions") are a topic more often than two names.
BARE_QUERY_MAX_TOKENS = 1
LONG_QUERY_TOKENS = 30


@dataclass(frozen=True)
class Identifier:
    """A code name found in the query: its tokens, last part first in importance."""

    text: str
    parts: tuple[str, ...]  # the qualified name's parts as family tokens, outermost first

    @property
    def name(self) -> str:
        return self.parts[-1]

    @property
    def written_name(self) -> str:
        """The last part as the query wrote it (``$constructor`` in ``core.$constructor()``)."""
        return re.split(r"\.|::|#|->", self.text.removesuffix("()"))[-1]

    @property
    def qualifier(self) -> str | None:
        return self.parts[-2] if len(self.parts) > 1 else None


@dataclass
class QueryAnalysis:
    text: str
    tokens: list[str]
    identifiers: list[Identifier] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    term_weights: dict[str, float] = field(default_factory=dict)
    intents: frozenset[str] = frozenset()

    @property
    def is_lookup(self) -> bool:
        """The query is (almost) only names: definitions should lead the answer."""
        return bool(self.identifiers) and len(self.tokens) <= 4

    @property
    def is_long(self) -> bool:
        return len(self.tokens) >= LONG_QUERY_TOKENS

    @property
    def identifier_tokens(self) -> set[str]:
        return {p for ident in self.identifiers for p in ident.parts}


def _looks_like_code(word: str) -> bool:
    core = word.removesuffix("()")
    if core != word:
        return True
    if any(sep in core for sep in (".", "::", "#", "->")):
        return not core.replace(".", "").isdigit()
    stripped = core.strip("_$")
    return ("_" in stripped) or bool(_CAMEL.search(core)) or core.startswith("$")


def _identifier(text: str) -> Identifier | None:
    core = text.removesuffix("()")
    parts: list[str] = []
    for piece in re.split(r"\.|::|#|->", core):
        toks = tokenize(piece)
        if len(toks) != 1:
            return None
        parts.append(toks[0])
    return Identifier(text, tuple(parts)) if parts else None


def analyse(query: str) -> QueryAnalysis:
    """Read ``query`` once: the family tokens, identifiers, paths, weights and intent."""
    tokens = tokenize(query)
    analysis = QueryAnalysis(query, tokens)
    seen: set[tuple[str, ...]] = set()

    def add(ident: Identifier | None) -> None:
        if ident is not None and ident.parts not in seen:
            seen.add(ident.parts)
            analysis.identifiers.append(ident)

    for match in _QUOTED.finditer(query):
        quoted = next(g for g in match.groups() if g is not None)
        for word in _IDENTIFIER.findall(quoted):
            if _looks_like_code(word) or len(_IDENTIFIER.findall(quoted)) == 1:
                add(_identifier(word))
    for word in _IDENTIFIER.findall(query):
        if _looks_like_code(word):
            add(_identifier(word))
    content_tokens = [t for t in tokens if t not in FILLER_WORDS]
    if not analysis.identifiers and 0 < len(tokens) <= BARE_QUERY_MAX_TOKENS and len(content_tokens) == len(tokens):
        suffixed = _SUFFIXED_NAME.fullmatch(query.strip())
        if suffixed:  # ``route!``, ``empty?``: the mark is part of the name in the languages that allow it
            add(_identifier(suffixed.group(0)))
        for word in _IDENTIFIER.findall(query):
            add(_identifier(word))
    for match in _PATH.finditer(query):
        text = match.group(0).strip(".")
        if "/" in text or not _looks_like_code(text):
            analysis.paths.append(text.lower())
    analysis.term_weights = _term_weights(tokens, analysis)
    # A long pasted issue mentions tests and examples in passing; only a short question asks for them.
    words = set(tokens) if len(tokens) < LONG_QUERY_TOKENS else set()
    analysis.intents = frozenset(role for role, cue in ROLE_WORDS.items() if words & cue)
    return analysis


def _term_weights(tokens: list[str], analysis: QueryAnalysis) -> dict[str, float]:
    """Weight per unique token: filler drops out, names count double, repetition counts a little."""
    counts = Counter(tokens)
    code_tokens = analysis.identifier_tokens
    weights: dict[str, float] = {}
    for token, count in counts.items():
        if token in FILLER_WORDS and token not in code_tokens:
            continue
        if len(token) == 1 and not token.isalpha():
            continue
        weight = 1.0 + math.log(count)  # a word an issue repeats is what it is about, with diminishing returns
        if token in code_tokens:
            weight *= 2.0
        weights[token] = weight
    if not weights:  # only filler (``how does it work``): keep every token rather than nothing
        weights = {t: 1.0 for t in counts}
    return weights
