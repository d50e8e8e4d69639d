"""Bridge to real Habitat 3.0 / PARTNR (``habitat_llm``): framed episode files, the in-container
runner, and ingestion of its outputs into framebench records."""
