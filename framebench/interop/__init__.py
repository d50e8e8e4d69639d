"""framebench beside other tools: Hugging Face datasets, lm-evaluation-harness and Inspect AI
(docs/interop.md). Suites are reached through the registry only."""
