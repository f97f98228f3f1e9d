"""Measuring retrieval: `cce bench`, `cce eval` (graded A/B agent runs) and the conformance report.
"""
