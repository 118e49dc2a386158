"""``make eval``: crawl labelled sites per topic and strategy, report harvest rate and recall.

Each site folder is served on 127.0.0.1; every (topic, strategy) pair is one
``scrapy crawl topic`` run with a page budget and a fetch log. Harvest rate is
the share of labelled on-topic pages among the first N pages fetched; recall
is the share of the topic's labelled pages found within that budget; the ceiling
is the harvest rate of a crawler that knew the labels and the link graph
(``evaluation/oracle.py``). The threshold is judged too: how many stored pages
are on topic (precision) and how many fetched on-topic pages were stored.

``--variant NAME:SETTING=VALUE[,...]`` (or ``--variants`` with JSON) adds runs of the first
strategy with other settings, so one table and one plot (``report/eval.png``) compare them.
``--learn N`` crawls every labelled topic with a keyword file that ``scrapy keywords`` learned
from N of its labelled pages instead of the topics file's (``evaluation/learn.py``).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from scrapy.settings import Settings

from demo.crawl import SCRAPY, topic_args
from demo.site import serve
from evaluation.learn import BACKGROUND_PAGES, learn_keywords, site_pages
from evaluation.oracle import LinkGraph, best_order
from evaluation.plot import plot
from topicspider import settings as project_settings
from topicspider.exceptions import TopicSpiderError
from topicspider.spiders.topic import TopicSpider

if TYPE_CHECKING:
    from collections.abc import Callable

ROOT = Path(__file__).resolve().parent.parent


@dataclass
class Result:
    site: str
    topic: str
    strategy: str
    budget: int
    fetched: int
    on_topic: int
    labelled: int
    stored: int
    stored_on_topic: int
    fetched_on_topic: list[str]
    curve: list[float]
    pages: list[dict]
    #: The harvest curve of a crawler that knew the labels and the link graph.
    ceiling: list[float]
    #: The setting variant this run used; empty for a plain strategy run.
    variant: str = ""

    @property
    def label(self) -> str:
        return self.variant or self.strategy

    @property
    def harvest(self) -> float:
        return self.on_topic / self.budget

    @property
    def ceiling_harvest(self) -> float:
        return self.ceiling[-1] if self.ceiling else 0.0

    @property
    def of_ceiling(self) -> float | None:
        """Harvest rate as a share of the ceiling's (none where the ceiling is 0)."""
        return self.harvest / self.ceiling_harvest if self.ceiling_harvest else None

    @property
    def recall(self) -> float:
        return self.on_topic / self.labelled if self.labelled else 0.0

    @property
    def precision(self) -> float:
        return self.stored_on_topic / self.stored if self.stored else 0.0

    @property
    def kept(self) -> float:
        return self.stored_on_topic / self.on_topic if self.on_topic else 0.0


def crawl(
    base: str, seed: str, keywords: str, strategy: str, budget: int, settings: list[str]
) -> list[dict]:
    with tempfile.TemporaryDirectory(prefix="topic-eval-") as tmp:
        log = Path(tmp, "fetch.jsonl")
        command = SCRAPY + topic_args(
            f"{base}{seed}",
            keywords,
            f"TOPIC_STRATEGY={strategy}",
            f"CLOSESPIDER_PAGECOUNT={budget + 5}",
            f"TOPIC_FETCH_LOG={log}",
            f"TOPIC_PAGES_DIR={tmp}/pages",
            "LOG_LEVEL=ERROR",
            "TOPIC_PROGRESS_INTERVAL=0",
            # Two crawls run at once: both would race for the first free telnet port.
            "TELNETCONSOLE_ENABLED=False",
            *settings,
        )
        subprocess.run(command, cwd=ROOT, check=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
        lines = log.read_text("utf-8").splitlines()
    return [json.loads(line) for line in lines][:budget]


def evaluate(
    site: str,
    labels: dict,
    base: str,
    keywords: str,
    topic: str,
    strategy: str,
    variant: str,
    budget: int,
    settings: list[str],
    best: list[float],
) -> Result:
    on_topic_paths = set(labels["topics"][topic])
    pages = crawl(base, labels["seed"], keywords, strategy, budget, settings)
    hits = first_hits([urlsplit(page["url"]).path for page in pages], on_topic_paths)
    curve = harvest_curve(hits)
    stored = [hit for page, hit in zip(pages, hits, strict=True) if page["accepted"]]
    return Result(
        site=site,
        topic=topic,
        strategy=strategy,
        budget=budget,
        fetched=len(pages),
        on_topic=sum(hits),
        labelled=len(on_topic_paths),
        stored=len(stored),
        stored_on_topic=sum(stored),
        fetched_on_topic=[p["url"] for p, h in zip(pages, hits, strict=True) if h],
        curve=curve,
        pages=[{**page, "on_topic": hit} for page, hit in zip(pages, hits, strict=True)],
        ceiling=best,
        variant=variant,
    )


def first_hits(paths: list[str], on_topic: set[str]) -> list[bool]:
    """Which fetches are of a labelled page not fetched before: one at two addresses (a
    query parameter the site adds in some links, ``?DbPAR=CALC``) counts once."""
    seen: set[str] = set()
    hits = []
    for path in paths:
        hits.append(path in on_topic and path not in seen)
        seen.add(path)
    return hits


def harvest_curve(hits: list[bool]) -> list[float]:
    """Harvest rate after each page fetched."""
    curve, found = [], 0
    for n, hit in enumerate(hits, start=1):
        found += hit
        curve.append(found / n)
    return curve


def ceiling_curve(graph: LinkGraph, seed: str, labelled: set[str], budget: int) -> list[float]:
    """The harvest curve of a crawler that knew the labels and the link graph; once it has
    every labelled page it can reach, the rest of its budget finds nothing on topic."""
    hits = [path in labelled for path in best_order(graph, seed, labelled, budget)]
    return harvest_curve(hits + [False] * (budget - len(hits)))


def table(results: list[Result], budget: int) -> str:
    rows = [
        f"| site | topic | strategy | variant | harvest@{budget} | ceiling@{budget} "
        f"| of ceiling | recall@{budget} | stored on topic | on-topic stored |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        share = "—" if r.of_ceiling is None else f"{r.of_ceiling:.2f}"
        rows.append(
            f"| {r.site} | {r.topic} | {r.strategy} | {r.variant or '—'} "
            f"| {r.harvest:.2f} | {r.ceiling_harvest:.2f} | {share} | {r.recall:.2f} "
            f"| {r.precision:.2f} ({r.stored_on_topic}/{r.stored}) "
            f"| {r.kept:.2f} ({r.stored_on_topic}/{r.on_topic}) |"
        )
    return "\n".join(rows)


def parse_variant(spec: str) -> tuple[str, list[str]]:
    """``NAME:SETTING=VALUE[,SETTING=VALUE]`` → ``(NAME, ["SETTING=VALUE", ...])``."""
    name, _, rest = spec.partition(":")
    settings = [item.strip() for item in rest.split(",") if item.strip()]
    if not name.strip() or not settings or not all("=" in item for item in settings):
        raise argparse.ArgumentTypeError(f"{spec!r}: expected NAME:SETTING=VALUE[,SETTING=VALUE]")
    return name.strip(), settings


def parse_variants(spec: str) -> list[tuple[str, list[str]]]:
    """A JSON object (or a file holding one): variant name → ``{SETTING: value}``."""
    path = Path(spec)
    try:
        text = path.read_text("utf-8") if path.is_file() else spec
        variants = json.loads(text)
    except (OSError, ValueError) as exc:
        raise argparse.ArgumentTypeError(f"--variants: not a JSON file or JSON: {exc}") from None
    if not isinstance(variants, dict) or not all(
        isinstance(settings, dict) and settings for settings in variants.values()
    ):
        raise argparse.ArgumentTypeError(
            '--variants: expected {"NAME": {"SETTING": value, ...}, ...}'
        )
    return [
        (name, [f"{key}={value}" for key, value in settings.items()])
        for name, settings in variants.items()
    ]


def runs(
    strategies: list[str], variants: list[tuple[str, list[str]]]
) -> list[tuple[str, str, list[str]]]:
    """(strategy, variant, settings) per crawl of a topic: each strategy as it is, then each
    variant with the first strategy unless the variant sets ``TOPIC_STRATEGY`` itself."""
    plain = [(strategy, "", []) for strategy in strategies]
    varied = []
    for name, settings in variants:
        strategy = strategies[0]
        for item in settings:
            key, _, value = item.partition("=")
            if key.strip() == "TOPIC_STRATEGY":
                strategy = value.strip()
        varied.append((strategy, name, settings))
    return plain + varied


def check_runs(planned: list[tuple[str, str, list[str]]], extra: list[str]) -> None:
    """Each run's settings, checked as its crawl will check them, before any crawl: a bad
    one is one line (``ArgumentTypeError``), not the crawl's error and a traceback, with the
    runs done before it lost."""
    for strategy, variant, settings in planned:
        given = Settings()
        given.setmodule(project_settings, priority="project")
        for item in [f"TOPIC_STRATEGY={strategy}", *extra, *settings]:
            name, equals, value = item.partition("=")
            if not equals:
                raise argparse.ArgumentTypeError(f"-s {item!r}: expected NAME=VALUE")
            given.set(name.strip(), value.strip(), priority="cmdline")
        try:
            TopicSpider.check_configuration(given)
        except TopicSpiderError as error:
            raise argparse.ArgumentTypeError(f"{variant or strategy}: {error}") from None


def at_least(least: int) -> Callable[[str], int]:
    """An argparse type: a whole number of at least ``least``."""

    def whole(text: str) -> int:
        number = int(text)  # argparse says "invalid whole value" on a ValueError
        if number < least:
            raise argparse.ArgumentTypeError(f"{number}: expected at least {least}")
        return number

    return whole


def planned_topics(
    labels: dict[str, Any], topics: dict[str, dict[str, str]]
) -> dict[str, list[str]]:
    """Site → its labelled topics that the topics file gives keywords for: a topics file
    naming one topic runs that topic alone."""
    return {
        site: [topic for topic in site_labels["topics"] if topic in topics.get(site, {})]
        for site, site_labels in labels.items()
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m evaluation.run", description=__doc__.split("\n", 1)[0]
    )
    parser.add_argument(
        "--sites",
        default=str(ROOT.parent / "shared" / "sites"),
        help="folder holding the site folders and labels.json",
    )
    parser.add_argument("--labels", help="labels file (default: SITES/labels.json)")
    parser.add_argument(
        "--topics",
        default=str(ROOT / "evaluation" / "topics.json"),
        help="JSON: site -> topic -> keywords (a name, file or inline)",
    )
    parser.add_argument("--only", nargs="*", help="only these sites")
    parser.add_argument("--budget", type=at_least(1), default=50)
    parser.add_argument("--strategies", default="best_first,bfs")
    parser.add_argument("--out", default=str(ROOT / "report" / "eval.md"))
    parser.add_argument(
        "-s",
        dest="settings",
        action="append",
        default=[],
        help="extra Scrapy setting NAME=VALUE for every crawl",
    )
    parser.add_argument(
        "--variant",
        dest="variants",
        type=parse_variant,
        action="append",
        default=[],
        metavar="NAME:SETTING=VALUE[,SETTING=VALUE]",
        help="also run the first strategy with these settings, shown as NAME (repeatable)",
    )
    parser.add_argument(
        "--variants",
        dest="variant_sets",
        type=parse_variants,
        action="append",
        default=[],
        metavar="JSON",
        help='variants as JSON or a JSON file: {"NAME": {"SETTING": value, ...}, ...}',
    )
    parser.add_argument(
        "--learn",
        type=at_least(1),
        metavar="N",
        help="crawl every labelled topic with keywords learned from N of its labelled pages",
    )
    parser.add_argument(
        "--learn-background",
        type=at_least(0),
        default=BACKGROUND_PAGES,
        metavar="N",
        help=f"with --learn: pages off every label as the background (0: none; {BACKGROUND_PAGES})",
    )
    args = parser.parse_args(argv)
    variants = args.variants + [v for variant_set in args.variant_sets for v in variant_set]
    strategies = args.strategies.split(",")
    names = [*strategies, *(name for name, _ in variants)]
    if len(set(names)) < len(names):
        parser.error(f"variant names must differ from each other and the strategies: {names}")
    planned = runs(strategies, variants)
    try:
        check_runs(planned, args.settings)
    except argparse.ArgumentTypeError as error:
        parser.error(str(error))

    sites_dir = Path(args.sites)
    labels = json.loads(Path(args.labels or sites_dir / "labels.json").read_text("utf-8"))
    if args.learn:
        topics = {site: dict.fromkeys(found["topics"]) for site, found in labels.items()}
    else:
        topics = json.loads(Path(args.topics).read_text("utf-8"))
    chosen = {
        site: site_topics
        for site, site_topics in planned_topics(labels, topics).items()
        if site_topics and (not args.only or site in args.only)
    }
    if not chosen:
        parser.error(f"{args.topics} gives keywords for none of the labelled topics")
    out = Path(args.out)
    results: list[Result] = []
    for site, site_topics in chosen.items():
        site_labels = labels[site]
        root = sites_dir / site_labels.get("root", site)
        if args.learn:
            learned = out.parent / f"{out.stem}-keywords" / site
            pages = site_pages(root)
            for topic in site_topics:
                topics[site][topic] = str(
                    learn_keywords(
                        root,
                        pages,
                        site_labels,
                        topic,
                        args.learn,
                        learned,
                        ROOT,
                        args.learn_background,
                    )
                )
        graph = LinkGraph(root)
        best = {
            topic: ceiling_curve(
                graph, site_labels["seed"], set(site_labels["topics"][topic]), args.budget
            )
            for topic in site_topics
        }
        server, base = serve(root)
        try:
            jobs = [
                (
                    site,
                    site_labels,
                    base,
                    topics[site][topic],
                    topic,
                    strategy,
                    variant,
                    args.budget,
                    args.settings + settings,
                    best[topic],
                )
                for topic in site_topics
                for strategy, variant, settings in planned
            ]
            with ThreadPoolExecutor(max_workers=2) as pool:
                results += pool.map(lambda job: evaluate(*job), jobs)
        finally:
            server.shutdown()
    report = table(results, args.budget)
    print(report)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(report + "\n", "utf-8")
    out.with_suffix(".json").write_text(
        json.dumps([r.__dict__ for r in results], ensure_ascii=False, indent=1), "utf-8"
    )
    plot(results, out.with_suffix(".png"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
