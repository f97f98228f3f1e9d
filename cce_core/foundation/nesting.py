"""Refuse YAML nested deeper than any real settings file, before it is composed.

PyYAML builds a document recursively (one Python frame or more per level), so
a file of a hundred thousand ``[`` would end in ``RecursionError`` somewhere in
the middle of a command. Its event parser, on the other hand, keeps its own
stack: :func:`yaml_too_deep` walks those events and stops at the first level
past the limit, so the check costs a few hundred events however deep the file
goes. Readers call it first and turn a ``True`` into one ``error:`` line that
names the file.
"""

from __future__ import annotations

MAX_YAML_DEPTH = 100
"""Deeper than any settings file or manifest needs, far below what composing can survive."""


def yaml_too_deep(text: str, limit: int = MAX_YAML_DEPTH) -> bool:
    """Whether ``text`` nests sequences/mappings more than ``limit`` levels deep.

    Text that is not YAML answers ``False``: the real reader reports that
    problem in its own words.
    """
    import yaml

    depth = 0
    try:
        for event in yaml.parse(text, Loader=yaml.BaseLoader):
            if isinstance(event, (yaml.SequenceStartEvent, yaml.MappingStartEvent)):
                depth += 1
                if depth > limit:
                    return True
            elif isinstance(event, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
                depth -= 1
    except yaml.YAMLError:
        return False
    return False


def too_deep_message(source: str, limit: int = MAX_YAML_DEPTH) -> str:
    """The one-line refusal for a file nested past ``limit`` levels."""
    return f"{source}: nested more than {limit} levels deep — refusing to read it (fix or remove the file)"
