"""A test-only framebench plugin (docs/extending.md): a model engine, a planner and a suite that
framebench finds through entry points, with no edit to framebench."""
