"""``make eval``'s pieces that need no crawl: variants, the table and the plot."""

from __future__ import annotations

import argparse
import json
import struct
from pathlib import Path

import pytest

from evaluation.learn import choose_pages, learn_keywords, site_pages
from evaluation.plot import plot, recall_curve
from evaluation.run import Result, parse_variant, parse_variants, planned_topics, runs, table
from topicspider.keywords import load_keywords, parse_keyword_file


def result(site: str, topic: str, strategy: str, hits: list[bool], variant: str = "") -> Result:
    found = [sum(hits[: n + 1]) for n in range(len(hits))]
    return Result(
        site=site,
        topic=topic,
        strategy=strategy,
        budget=len(hits),
        fetched=len(hits),
        on_topic=sum(hits),
        labelled=4,
        stored=sum(hits),
        stored_on_topic=sum(hits),
        fetched_on_topic=[],
        curve=[f / (n + 1) for n, f in enumerate(found)],
        pages=[{"url": f"http://127.0.0.1/{n}", "on_topic": hit} for n, hit in enumerate(hits)],
        variant=variant,
    )


RESULTS = [
    result("docs", "asyncio", "best_first", [False, True, True, True, False, True]),
    result("docs", "asyncio", "bfs", [False, False, False, True, False, True]),
    result("docs", "asyncio", "best_first", [False, True, False, True, False, False], "no-tunnel"),
    result("手册", "安全 (security)", "best_first", [True, True, False, False, False, False]),
    result("手册", "安全 (security)", "bfs", [False, False, False, False, False, True]),
]


def test_plot_writes_one_panel_per_site_and_topic(tmp_path):
    out = tmp_path / "eval.png"
    plot(RESULTS, out)
    data = out.read_bytes()
    assert data.startswith(b"\x89PNG\r\n\x1a\n")
    width, height = struct.unpack(">II", data[16:24])
    assert (width, height) == (1000, 420)  # two panels side by side
    assert len(data) > 10_000


def test_recall_counts_labelled_pages_found_so_far():
    assert list(recall_curve(RESULTS[0])) == [0.0, 0.25, 0.5, 0.75, 0.75, 1.0]


def test_table_has_a_variant_column():
    rows = table(RESULTS, 6).splitlines()
    assert rows[0].startswith("| site | topic | strategy | variant | harvest@6 | recall@6 ")
    assert rows[2].startswith("| docs | asyncio | best_first | — | 0.67 | 1.00 ")
    assert rows[4].startswith("| docs | asyncio | best_first | no-tunnel | 0.33 | 0.50 ")


def test_variants_from_the_command_line_and_json(tmp_path):
    assert parse_variant("no-tunnel:TOPIC_TUNNEL_DEPTH=0") == (
        "no-tunnel",
        ["TOPIC_TUNNEL_DEPTH=0"],
    )
    assert parse_variant("x: A=1 , B=2") == ("x", ["A=1", "B=2"])
    for bad in ("no-settings", "x:", ":A=1", "x:A"):
        with pytest.raises(argparse.ArgumentTypeError):
            parse_variant(bad)
    spec = '{"dfs": {"TOPIC_STRATEGY": "dfs", "TOPIC_TUNNEL_DEPTH": 1}}'
    assert parse_variants(spec) == [("dfs", ["TOPIC_STRATEGY=dfs", "TOPIC_TUNNEL_DEPTH=1"])]
    (tmp_path / "variants.json").write_text(spec)
    assert parse_variants(str(tmp_path / "variants.json")) == parse_variants(spec)
    with pytest.raises(argparse.ArgumentTypeError):
        parse_variants('{"x": 1}')
    assert runs(["best_first", "bfs"], [*parse_variants(spec), ("a", ["A=1"])]) == [
        ("best_first", "", []),
        ("bfs", "", []),
        ("dfs", "dfs", ["TOPIC_STRATEGY=dfs", "TOPIC_TUNNEL_DEPTH=1"]),
        ("best_first", "a", ["A=1"]),
    ]


EVALUATION = Path(__file__).resolve().parent.parent / "evaluation"


@pytest.mark.parametrize(
    "topics_file", sorted(EVALUATION.glob("**/topics.json")), ids=lambda path: path.parent.name
)
def test_every_evaluation_topic_has_a_keyword_vector_the_crawler_accepts(topics_file, monkeypatch):
    """A keyword file ``make eval`` names must load as the spider would load it: one that
    fails stops that topic's crawls with an error instead of a result."""
    monkeypatch.chdir(EVALUATION.parent)  # where make eval runs its crawls
    labels = topics_file.parent / "labels.json"
    labelled = json.loads(labels.read_text("utf-8")) if labels.exists() else None
    for site, topics in json.loads(topics_file.read_text("utf-8")).items():
        for topic, spec in topics.items():
            vector = load_keywords(spec)
            assert len(vector) >= 5, (site, topic)
            if labelled is not None:
                assert labelled[site]["topics"][topic], (site, topic)


def test_a_topics_file_naming_one_topic_runs_that_topic_alone():
    labels = {
        "docs": {"topics": {"asyncio": ["a.html"], "concurrency": ["c.html"]}},
        "手册": {"topics": {"安全 (security)": ["s.html"]}},
    }
    topics = {"docs": {"concurrency": "concurrency"}}
    assert planned_topics(labels, topics) == {"docs": ["concurrency"], "手册": []}


def test_keywords_are_learned_from_labelled_pages_against_pages_off_every_label(site, tmp_path):
    """``--learn``: the samples are pages of the topic, the background pages of no topic,
    drawn the same way each run, and ``scrapy keywords`` makes a file the crawler loads."""
    cooking = sorted(page for page in site.pages if page.startswith("/cooking/"))
    labels = {
        "seed": site.seed_path,
        "topics": {"football": sorted(site.on_topic), "cooking": cooking},
    }
    pages = site_pages(site.root)
    assert set(site.on_topic) <= set(pages)
    chosen, background = choose_pages(pages, labels, "football", 3)
    assert len(chosen) == 3
    assert set(chosen) <= site.on_topic
    assert len(background) == min(20, len(set(pages) - site.on_topic - set(cooking)))
    assert not set(background) & (site.on_topic | set(cooking))
    assert choose_pages(pages, labels, "football", 3) == (chosen, background)
    out = learn_keywords(
        site.root, pages, labels, "football", 3, tmp_path / "learned", EVALUATION.parent
    )
    assert out.parent == tmp_path / "learned"
    vector = parse_keyword_file(out)
    assert len(vector.weights) == 20
    football = {"足球", "球队", "比赛", "联赛", "球员", "football", "league", "coach", "player"}
    assert len(football & set(vector.weights)) >= 4, vector.weights
    assert not {"菜谱", "烹饪", "recipe"} & set(vector.weights), vector.weights
