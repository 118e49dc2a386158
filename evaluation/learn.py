"""Keyword files learned from a site's own pages, for ``make eval EVAL_ARGS=--learn N``.

A user without a keyword file hands ``scrapy keywords`` a few pages they know are on
topic and some that are not. This does the same for each labelled topic: N of its
labelled pages are the samples and pages off every label the background, both drawn
at random with a seed made of the site and topic names, so every run learns the same
file. The files are kept (``report/eval-keywords/``) so that a reader can see what was
crawled with.
"""

from __future__ import annotations

import os
import random
import re
import subprocess
from pathlib import Path

from demo.crawl import SCRAPY

#: Off-topic pages the idf is learned from, as "other sections of the same site".
BACKGROUND_PAGES = 20


def site_pages(root: Path) -> list[str]:
    """URL paths of a site folder's HTML pages (symlinked folders followed), sorted."""
    return sorted(
        "/" + Path(folder, name).relative_to(root).as_posix()
        for folder, _, names in os.walk(root, followlinks=True)
        for name in names
        if name.endswith(".html")
    )


def choose_pages(
    pages: list[str], labels: dict, topic: str, samples: int, background: int = BACKGROUND_PAGES
) -> tuple[list[str], list[str]]:
    """``samples`` of the topic's labelled pages and ``background`` pages off every label."""
    rng = random.Random(f"{labels['seed']} {topic}")
    labelled = set().union(*labels["topics"].values())
    on_topic = sorted(set(labels["topics"][topic]) & set(pages))
    off_topic = [page for page in pages if page not in labelled]
    return (
        rng.sample(on_topic, min(samples, len(on_topic))),
        rng.sample(off_topic, min(background, len(off_topic))),
    )


def learn_keywords(
    root: Path,
    pages: list[str],
    labels: dict,
    topic: str,
    samples: int,
    out_dir: Path,
    cwd: Path,
    background: int = BACKGROUND_PAGES,
) -> Path:
    """Run ``scrapy keywords`` on pages chosen among ``pages`` (:func:`site_pages`, walked
    once per site), with ``background`` pages off the labels (0: none, as a user with only
    on-topic pages runs it); the keyword file it wrote."""
    chosen, others = choose_pages(pages, labels, topic, samples, background)
    out = out_dir / f"{re.sub(r'[^0-9A-Za-z一-鿿]+', '-', topic).strip('-')}.txt"
    out.parent.mkdir(parents=True, exist_ok=True)
    command = [*SCRAPY, "keywords", *_files(root, chosen)]
    if others:
        command += ["--background", *_files(root, others)]
    command += ["-o", str(out)]
    subprocess.run(command, cwd=cwd, check=True)
    return out


def _files(root: Path, paths: list[str]) -> list[str]:
    return [str(root / path.lstrip("/")) for path in paths]
