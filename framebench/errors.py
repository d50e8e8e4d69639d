"""User-facing errors: the CLI prints their message as one line and exits 2 (no traceback)."""


class UserError(Exception):
    """A mistake in the user's input (a path, a file, a flag): reported as one clear line."""

    exit_code = 2


class Interrupted(Exception):
    """SIGINT (Ctrl-C) or SIGTERM: the command stops; every answer already stored stays, so running
    the same command again resumes. The CLI reports it in one line and exits 130."""

    exit_code = 130

    def __init__(self, stored: int | None = None, total: int | None = None, where: str = "") -> None:
        super().__init__("interrupted")
        self.stored, self.total, self.where = stored, total, where

    def message(self) -> str:
        if self.stored is None:
            return "interrupted: nothing was half-written; run the same command again to resume"
        where = f" in {self.where}" if self.where else ""
        return (f"interrupted: {self.stored} of {self.total} answers stored{where}; "
                "run the same command again to resume")
