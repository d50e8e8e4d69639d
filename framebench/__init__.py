"""framebench: how the framing of a request changes what a language model answers or does.

Core shared by every front end: CLI, records schema, result store, model backends and the
strict-scoring layer (``framebench.scoring``).
"""

__version__ = "0.1.0"
