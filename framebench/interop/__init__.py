"""Interoperability with other tools: Hugging Face datasets, lm-evaluation-harness, Inspect AI."""
