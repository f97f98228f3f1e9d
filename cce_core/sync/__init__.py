"""CCE Sync: share prebuilt indexes through an ordinary git remote.

CI pushes one content-addressed artifact per commit; everyone else pulls it
instead of indexing. The artifact format is the engine family's, so caches
are shared across engines. Modules: `settings` (the `sync.*` config keys),
`identity` (repo ids and remote keys), `artifact` (the `.cce` codec),
`remote` (the git working clone).
"""

# The marker a pull leaves beside the store it wrote (``.cce/synced.json``), named here so a local
# index can look for it without importing the sync service.
SYNC_MARKER_FILE = "synced.json"
