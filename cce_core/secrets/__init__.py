"""Secret protection, shared by everything that stores or shows text.

Indexing, knowledge ingest, Sync, memory notes, doctor and the evaluation
harness all need the same two guarantees: files that hold credentials by
their name are never opened (:mod:`.sensitive_paths`), and text that holds a
credential is stored and shown with the value replaced by a marker
(:mod:`.redactor`, which dispatches to the family's profile or to the strict
one in :mod:`.scanner`, :mod:`.rules` and :mod:`.contexts`). Keeping it out of
``indexing`` lets those callers depend on it without depending on the indexer.
"""
