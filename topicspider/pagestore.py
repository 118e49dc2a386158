"""The pages folder: each accepted page's raw bytes and a line about it in ``index.jsonl``.

``python -m topicspider.pagestore`` is the page writer process of
:class:`~topicspider.pipelines.files.FilesystemPipeline`; it imports neither Scrapy nor
Twisted (see :mod:`topicspider.frames`).
"""

from __future__ import annotations

import errno
import itertools
import json
import os
from collections.abc import Iterator
from contextlib import suppress
from pathlib import Path
from typing import Any

from topicspider import atomic
from topicspider.frames import serve
from topicspider.paths import INDEX_NAME, url_to_path

#: Item fields written to each line of the index.
INDEX_FIELDS = ("url", "title", "relevance", "depth", "charset", "path", "parent_url", "fetched_at")
_CREATE = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_BINARY", 0)


class PageStore:
    """A pages folder and its index, written one page at a time.

    A page goes to a temporary file renamed into place, and its index line follows
    in one ``write()``, cut off again if it falls short: a crash of the crawler
    leaves no half page and no half line, and every indexed page is whole.
    A page written again gets a new line too, so that the last line of a URL always
    describes the bytes on disk (its charset may have changed); :func:`tidy_index`
    then lists it once. After the first failure it refuses every later page, so that
    none is stored behind a page that was lost.
    """

    def __init__(self, pages_dir: str | os.PathLike[str]) -> None:
        self.pages_dir = Path(pages_dir)
        self._index = open(self.pages_dir / INDEX_NAME, "ab", buffering=0)  # noqa: SIM115
        self._failed: OSError | None = None
        self._pid = os.getpid()
        self._temps = itertools.count()

    def write(self, url: str, body: bytes, record: dict[str, Any]) -> str:
        """Write the page of ``url``, then ``record`` as its index line; return the page's
        path (see :func:`url_to_path`)."""
        if self._failed is not None:
            raise OSError(errno.ECANCELED, f"Not stored after an earlier failure: {self._failed}")
        path = url_to_path(url)
        target = os.path.join(self.pages_dir, *path.split("/"))
        try:
            earlier = self._write_page(target, body)
            try:
                self._append(_index_line(record, path))
            except OSError:
                # The folder as it was: the page's earlier bytes, which its last line
                # describes, or no file for a page the index does not list.
                with suppress(OSError):
                    if earlier:
                        os.replace(earlier, target)
                    else:
                        os.unlink(target)
                raise
        except OSError as exc:
            self._failed = exc
            raise
        if earlier:
            with suppress(OSError):
                os.unlink(earlier)
        return path

    def close(self) -> None:
        self._index.close()

    def _write_page(self, target: str, body: bytes) -> str | None:
        """Open, write, close, rename: creating a file is most of a stored page's cost, so
        its folder is made only when opening in it fails, and the temporary name needs
        no random bytes. A page written again keeps its earlier bytes under a second name
        (a hard link, made before the rename) until its index line is written: the name,
        or None."""
        folder = os.path.dirname(target)
        # "~tmp-" starts no page or folder name (see url_to_path), so it clobbers none;
        # the process id keeps two writers of one folder apart.
        temp = os.path.join(folder, f"~tmp-{self._pid}-{next(self._temps)}.part")
        earlier: str | None = None
        try:
            fd = os.open(temp, _CREATE, 0o666)
        except FileNotFoundError:
            os.makedirs(folder, exist_ok=True)
            fd = os.open(temp, _CREATE, 0o666)
        try:
            try:
                rest = memoryview(body)
                while rest:  # a short write is followed by one that raises (a full disk)
                    rest = rest[os.write(fd, rest) :]
            finally:
                os.close(fd)
            with suppress(OSError):  # a new page (or a file system without hard links)
                os.link(target, f"{temp}.earlier")
                earlier = f"{temp}.earlier"
            os.replace(temp, target)
        except BaseException:
            for name in filter(None, (temp, earlier)):
                with suppress(OSError):
                    os.unlink(name)
            raise
        return earlier

    def _append(self, data: bytes) -> None:
        """Append a line, or leave the index as it was and raise an error that names it
        (a write to an open file names none: ``[Errno 1] Operation not permitted``)."""
        index = str(self.pages_dir / INDEX_NAME)
        end = self._index.seek(0, os.SEEK_END)
        try:
            if self._index.write(data) != len(data):
                raise OSError(errno.ENOSPC, "Short write", index)
        except OSError as exc:
            with suppress(OSError):
                self._index.truncate(end)
            if exc.filename is None:
                raise OSError(exc.errno, exc.strerror, index) from exc
            raise


def tidy_index(index: Path) -> set[str]:
    """Make ``index`` list each URL once, and return its URLs.

    A line torn by a crash is dropped, and the lines of a page written again are
    replaced by the last one, in the place of the first, so the order of the pages stays
    that of their first storing. The index is rewritten (temporary file, ``fsync``,
    rename) only if it changes, and a crash leaves it as it was before or after.
    """
    temp = index.with_name(f"~tmp-{index.name}.part")
    if temp.exists():  # left by a crawl killed while it tidied
        temp.unlink()
    try:
        data = index.read_bytes()
    except FileNotFoundError:
        return set()
    *lines, torn = data.split(b"\n")
    rows = [(_url_of(line), line) for line in lines]
    latest = {url: line for url, line in rows if url is not None}
    if torn or len(latest) < sum(url is not None for url, _ in rows):
        atomic.replace(index, b"".join(_tidied(rows, latest)), temp)
    return set(latest)


def _url_of(line: bytes) -> str | None:
    """The URL a line of the index is about; None for a torn line, or one that is not
    a page's (a line a user added, without a ``url``)."""
    with suppress(ValueError, TypeError, KeyError):
        url = json.loads(line)["url"]
        if isinstance(url, str):
            return url
    return None


def _tidied(rows: list[tuple[str | None, bytes]], latest: dict[str, bytes]) -> Iterator[bytes]:
    """Each URL's last line where its first was; lines without a URL as they were."""
    listed: set[str] = set()
    for url, line in rows:
        if url is None:
            yield line + b"\n"
        elif url not in listed:
            listed.add(url)
            yield latest[url] + b"\n"


def _index_line(record: dict[str, Any], path: str) -> bytes:
    line = {field: record.get(field) for field in INDEX_FIELDS}
    line["path"] = path
    # A lone surrogate in a str becomes its JSON escape.
    return (json.dumps(line, ensure_ascii=False) + "\n").encode("utf-8", "backslashreplace")


def main() -> None:
    """The page writer process: a pages folder, then pages, until end of input."""
    serve(lambda pages_dir: PageStore(pages_dir).write)


if __name__ == "__main__":
    main()
