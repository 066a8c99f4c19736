"""The one exception type for bad user input.

Every problem a user can fix (a bad file, an unknown metric, a missing key) is raised as
:class:`InputError` with a one-line message that names the file, line or option and says how
to fix it. The CLI prints it and exits with code 2; library callers get a ``ValueError``
subclass they can catch.
"""

from __future__ import annotations

from pathlib import Path


class InputError(ValueError):
    """A problem with user input, fixable by the user. ``str(err)`` is one line."""

    def __init__(self, message: str, *, path: str | Path | None = None, line: int | None = None):
        where = ""
        if path is not None:
            where = f"{path}"
            if line is not None:
                where += f":{line}"
            where += ": "
        self.path = None if path is None else str(path)
        self.line = line
        super().__init__(where + " ".join(str(message).split()))
