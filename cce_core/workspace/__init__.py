"""Several codebases as one: the workspace manifest and the federated search over its members.
"""
