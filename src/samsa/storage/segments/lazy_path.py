"""A file's ``Path``, made only when first asked for.

At start-up a broker of 10,000 partitions opens a segment per partition, and
building and formatting a pathlib ``Path`` for each of its files was a fifth
of the work; most of those files are never named again (nothing reads an idle
partition's index, nothing logs its ``.log``).  So a segment's files are given
(directory, file name) and the ``Path`` is joined on first use.
"""

from __future__ import annotations

from pathlib import Path

PathOrParts = Path | tuple[Path, str]
"""A file, or (directory, file name) to make it of when first needed."""


class LazilyNamed:
    """Holds ``path`` for a file named by ``PathOrParts``."""

    _path: Path | None
    _where: tuple[Path, str] | None

    def _name(self, path: PathOrParts) -> None:
        self._path = path if isinstance(path, Path) else None
        self._where = None if isinstance(path, Path) else path

    @property
    def path(self) -> Path:
        if self._path is None:
            assert self._where is not None
            directory, file_name = self._where
            self._path = directory / file_name
        return self._path

    @path.setter
    def path(self, path: Path) -> None:
        self._path = path
