"""framebench beside other evaluation frameworks (``framebench[inspect]``: Inspect AI tasks and
log import, docs/interop.md). Suites are reached through the registry only."""
