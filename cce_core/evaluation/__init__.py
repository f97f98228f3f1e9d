"""Measuring retrieval: `cce bench`, `cce eval` (graded A/B agent runs), `cce relevance` (ranking quality
against labeled queries) and the conformance report.
"""
