"""Which files ``ingest`` takes from the paths it is given, and which it skips and why.

A file named on the command line is always taken (a kind no loader reads then fails
with ``unsupported-media-type``, so the receipt says so). A folder is walked like
``Sources.folder`` (recursively, symbolic links to folders not followed): a file is
taken when its name matches one of the patterns and its suffix has a loader; every
other file is counted as skipped, by pattern or by media type, with its suffix, so a
folder that gives nothing says what it held instead.
"""

from __future__ import annotations

import fnmatch
import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from graphrag_orm.sources import MEDIA_TYPES, Source, Sources

__all__ = ["DEFAULT_PATTERNS", "Collected", "SkippedFiles", "collect_sources"]

DEFAULT_PATTERNS = ("*.md", "*.markdown", "*.txt", "*.pdf")
#: Suffixes named when a skip is described (the most frequent first).
SHOWN_SUFFIXES = 5


@dataclass
class SkippedFiles:
    """The files of one folder that were not taken: by pattern, by media type, and their suffixes."""

    folder: Path
    taken: int = 0
    by_pattern: int = 0
    by_media_type: int = 0
    suffixes: Counter[str] = field(default_factory=Counter)

    @property
    def skipped(self) -> int:
        return self.by_pattern + self.by_media_type

    def describe(self, patterns: tuple[str, ...]) -> str:
        """``folder: 0 files taken, 4 skipped: 3 match none of *.md, ... and 1 has no loader (.rst 2, .html 2)``."""
        parts = []
        if self.by_pattern:
            parts.append(f"{self.by_pattern} match none of {', '.join(patterns)}")
        if self.by_media_type:
            parts.append(f"{self.by_media_type} have no loader (only {', '.join(sorted(MEDIA_TYPES))})")
        common = ", ".join(
            f"{suffix or '(no suffix)'} {count}" for suffix, count in self.suffixes.most_common(SHOWN_SUFFIXES)
        )
        reasons = " and ".join(parts) if parts else "the folder holds no files"
        found = f"; skipped suffixes: {common}" if common else ""
        return f"{self.folder}: {self.taken} files taken, {self.skipped} skipped: {reasons}{found}"


@dataclass
class Collected:
    """The sources to ingest, in a stable order, and the skips of each folder."""

    sources: list[Source]
    folders: list[SkippedFiles]


def _walk(root: Path) -> list[str]:
    names: list[str] = []
    for _directory, _subdirectories, files in os.walk(root, followlinks=False):
        names.extend(files)
    return names


def collect_sources(paths: list[Path], base_uri: str | None, patterns: tuple[str, ...]) -> Collected:
    """Files as given, folders expanded by ``patterns`` (stable order), URIs from ``base_uri``."""
    found: list[Source] = []
    folders: list[SkippedFiles] = []
    seen: set[str] = set()
    for path in paths:
        if path.is_dir():
            batch: list[Source] = []
            for pattern in patterns:
                batch.extend(Sources.folder(path, pattern=pattern, base_uri=base_uri))
            skips = SkippedFiles(Path(os.path.abspath(path)))
            for name in _walk(path):
                suffix = Path(name).suffix.lower()
                if not any(fnmatch.fnmatch(name, pattern) for pattern in patterns):
                    skips.by_pattern += 1
                    skips.suffixes[suffix] += 1
                elif suffix not in MEDIA_TYPES:
                    skips.by_media_type += 1
                    skips.suffixes[suffix] += 1
            batch = [source for source in batch if source.path is None or source.path.suffix.lower() in MEDIA_TYPES]
            batch.sort(key=lambda s: s.source_uri)
            folders.append(skips)
        else:
            uri = base_uri.rstrip("/") + "/" + path.name if base_uri else None
            batch = [Sources.file(path, uri=uri)]
        taken = 0
        for source in batch:
            if source.source_uri not in seen:
                seen.add(source.source_uri)
                found.append(source)
                taken += 1
        if path.is_dir():
            folders[-1].taken = taken
    return Collected(found, folders)
