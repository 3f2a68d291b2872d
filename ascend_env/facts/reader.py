"""The capture as the area builders read it, and the notes they leave on the way."""

from __future__ import annotations

from ascend_env.core.versions import AscendVersion, try_parse
from ascend_env.facts.capture import Capture


class CaptureReader:
    """Lookups into one capture; each area builder adds what it cannot read to `notes`."""

    def __init__(self, capture: Capture) -> None:
        self.capture = capture
        self.notes: list[str] = []

    def file(self, path: str) -> str | None:
        return self.capture.files.get(path)

    def output(self, key: str) -> str | None:
        return self.capture.output(key)

    def version(self, raw: str | None, what: str) -> AscendVersion | None:
        """`raw` as a version; a note (and None) when it is in no known vendor form."""
        if raw is None:
            return None
        parsed = try_parse(raw)
        if parsed is None:
            self.notes.append(f"{what}: {raw!r} is not a version in any known vendor form")
        return parsed

    def resolved(self, path: str) -> str:
        """Where a captured link points, or `path` itself."""
        info = self.capture.paths.get(path)
        if info is not None and info.type == "link" and info.resolved:
            return info.resolved
        return path

    def exists(self, path: str) -> bool:
        info = self.capture.paths.get(path)
        return info is not None and info.exists
