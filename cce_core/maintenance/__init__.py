"""The health and upkeep of an installation: ``cce doctor`` and ``cce update``."""
