"""User-facing errors: the CLI prints their message as one line and exits 2 (no traceback)."""


class UserError(Exception):
    """A mistake in the user's input (a path, a file, a flag): reported as one clear line."""

    exit_code = 2
