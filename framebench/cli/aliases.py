"""Old spellings of renamed options, kept for one release (issue 52: one name per concept) and
out of ``--help``: a command line that uses one is read with the new name, and a warning says so.
Renamed commands are registered hidden beside their new name (``framebench plan``: ``power``)."""

from __future__ import annotations

from collections.abc import Sequence

# (command path, old option) -> new option. ``--batch-size`` is prompts per forward pass (``text``);
# chats or episodes per model call is the call size, as ``Engine.call_size`` names it.
RENAMED_OPTIONS: dict[tuple[tuple[str, ...], str], str] = {
    (("build", "omit"), "--batch-size"): "--call-size",
    (("sheets", "draft"), "--batch-size"): "--call-size",
    (("partnr", "draft-purposes"), "--batch-size"): "--call-size",
}


def renamed(argv: Sequence[str]) -> tuple[list[str], list[str]]:
    """``argv`` with the old option spellings replaced, and one warning per replacement."""
    args, warnings = list(argv), []
    for (path, old), new in RENAMED_OPTIONS.items():
        if tuple(args[:len(path)]) != path:
            continue
        for i in range(len(path), len(args)):
            if args[i] == "--":
                break
            flag, eq, value = args[i].partition("=")
            if flag == old:
                args[i] = f"{new}{eq}{value}"
                warnings.append(f"framebench {' '.join(path)} {old} is now {new} (the old name goes in the next release)")
    return args, warnings
