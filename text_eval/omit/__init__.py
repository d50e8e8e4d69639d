"""OMIT construction: MoralChoice seed -> inaction labels -> mirror frames -> persona panel ->
conflict selection -> frozen items (``framebench build omit``). See ``datasets/omit.md``."""
