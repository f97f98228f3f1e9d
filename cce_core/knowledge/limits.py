"""The ceilings of one knowledge ingest: feed bytes, records, sections per record, sections in all.

A feed is untrusted input and ingest amplifies it: every section becomes a
stored 256-number vector, so 120 KB of empty headings once made a 147 MB
store, and 100,000 tiny records took minutes and gigabytes. These limits keep
one ingest bounded in time, memory and store size (about 50,000 sections is a
store of roughly 150-200 MB) while leaving room for real corpora: a docs
folder of a few hundred pages or an export of tens of thousands of tickets.
They are documented in docs/knowledge.md; a feed over one is refused with a
line naming where it went over, and nothing is written.
"""

from __future__ import annotations

from dataclasses import dataclass

MAX_FEED_BYTES = 64 * 1024 * 1024
MAX_RECORDS = 50_000
MAX_SECTIONS = 50_000
MAX_SECTIONS_PER_RECORD = 1_000


@dataclass(frozen=True)
class IngestLimits:
    """The limits one ingest enforces (tests pass smaller ones; the CLI uses the defaults)."""

    max_feed_bytes: int = MAX_FEED_BYTES
    max_records: int = MAX_RECORDS
    max_sections: int = MAX_SECTIONS
    max_sections_per_record: int = MAX_SECTIONS_PER_RECORD


DEFAULT_LIMITS = IngestLimits()
