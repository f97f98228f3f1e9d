"""Symbol navigation: definitions, references, callers and callees, from the language packs' tags queries.

Index time (:mod:`.tags`, :mod:`.extract`, :mod:`.model`) sits below the
indexing layer: the chunker runs a pack's tags query over the parse tree it
already has and each file's symbols are stored with it, per segment. Query
time (:mod:`.index`, :mod:`.resolution`) sits above the store and answers
from those records. This package's ``__init__`` imports nothing, so the
chunker can use the index-time modules without loading the query side.
"""
