"""``make eval``'s pieces that need no crawl: variants, the table and the plot."""

from __future__ import annotations

import argparse
import json
import struct
from pathlib import Path

import pytest

from evaluation.learn import choose_pages, learn_keywords, site_pages
from evaluation.oracle import LinkGraph, best_order
from evaluation.plot import plot, recall_curve
from evaluation.run import (
    Result,
    ceiling_curve,
    first_hits,
    main,
    parse_variant,
    parse_variants,
    planned_topics,
    runs,
    table,
)
from topicspider.keywords import load_keywords, parse_keyword_file


def result(
    site: str, topic: str, strategy: str, hits: list[bool], variant: str = "", best: int = 4
) -> Result:
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
        ceiling=[min(n, best) / n for n in range(1, len(hits) + 1)],
        variant=variant,
    )


RESULTS = [
    result("docs", "asyncio", "best_first", [False, True, True, True, False, True]),
    result("docs", "asyncio", "bfs", [False, False, False, True, False, True]),
    result("docs", "asyncio", "best_first", [False, True, False, True, False, False], "no-tunnel"),
    result(
        "手册", "安全 (security)", "best_first", [True, True, False, False, False, False], best=0
    ),
    result("手册", "安全 (security)", "bfs", [False, False, False, False, False, True], best=0),
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


def test_table_has_a_variant_column_and_the_ceiling():
    rows = table(RESULTS, 6).splitlines()
    assert rows[0].startswith(
        "| site | topic | strategy | variant | harvest@6 | ceiling@6 | of ceiling | recall@6 "
    )
    assert rows[2].startswith("| docs | asyncio | best_first | — | 0.67 | 0.67 | 1.00 | 1.00 ")
    assert rows[4].startswith(
        "| docs | asyncio | best_first | no-tunnel | 0.33 | 0.67 | 0.50 | 0.50 "
    )
    assert rows[5].startswith("| 手册 | 安全 (security) | best_first | — | 0.33 | 0.00 | — | 0.50 ")


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


@pytest.mark.parametrize(
    ("given", "said"),
    [
        (["--budget", "0"], "argument --budget: 0: expected at least 1"),
        (["--budget", "-5"], "argument --budget: -5: expected at least 1"),
        (["--learn", "0"], "argument --learn: 0: expected at least 1"),
        (["--learn-background", "-1"], "argument --learn-background: -1: expected at least 0"),
        (["--strategies", "bogus"], "bogus: TOPIC_STRATEGY='bogus': expected one of"),
        (["--variant", "bad:TOPIC_TUNNEL_DEPTH=abc"], "bad: TOPIC_TUNNEL_DEPTH='abc': expected"),
        (["-s", "TOPIC_THRESHOLD=5"], "best_first: TOPIC_THRESHOLD='5': expected a number"),
        (["-s", "NOEQUALS"], "-s 'NOEQUALS': expected NAME=VALUE"),
    ],
)
def test_bad_options_are_one_line_before_any_crawl(given, said, tmp_path, capsys):
    """Before: a crawl with no page limit for a budget below 1, a traceback after the
    crawls for 0, or the crawl's error and a traceback, the runs done before it lost."""
    with pytest.raises(SystemExit) as stopped:
        main(["--sites", str(tmp_path), "--out", str(tmp_path / "eval.md"), *given])
    assert stopped.value.code == 2
    assert f"error: {said}" in capsys.readouterr().err
    assert not (tmp_path / "eval.md").exists()


def test_the_legend_fits_one_panel_of_many_variants(tmp_path):
    """Before, six entries a row whatever the width: the first and last were cut off."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    drawn = []
    save = Figure.savefig

    def keep(figure, *args, **kwargs):
        drawn.append(figure)
        save(figure, *args, **kwargs)

    names = ["no-tunnel", "anchor-weight-0.3", "fixed-threshold-0.2", "breadth-first-variant"]
    results = [RESULTS[0], RESULTS[1], *(result("docs", "asyncio", "best_first", [True] * 6, n)
                                          for n in names)]  # fmt: skip
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Figure, "savefig", keep)
        plot(results, tmp_path / "eval.png")
    [figure] = drawn
    renderer = FigureCanvasAgg(figure).get_renderer()
    legend = figure.legends[0].get_window_extent(renderer)
    assert 0 <= legend.x0 < legend.x1 <= figure.bbox.width


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

    # ``--learn-background 0``: the samples alone, as a user with only on-topic pages has.
    alone = learn_keywords(
        site.root, pages, labels, "football", 3, tmp_path / "alone", EVALUATION.parent, 0
    )
    assert "idf from jieba's table (Chinese) and the samples" in alone.read_text("utf-8")
    assert len(football & set(parse_keyword_file(alone).weights)) >= 4


def write_pages(root: Path, pages: dict[str, str]) -> None:
    """English pages under ``root``: URL path → the ``<body>`` markup."""
    for path, body in pages.items():
        file = root / path.lstrip("/")
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text(
            f'<html lang="en"><head><title>{path}</title></head><body>{body}</body></html>'
        )


def links(*paths: str) -> str:
    return "".join(f'<p><a href="{path}">a page with a longer name</a></p>' for path in paths)


def test_the_ceiling_takes_a_linked_labelled_page_first_then_the_shortest_way_to_the_next(
    tmp_path,
):
    """The crawler that knows the labels and the link graph: what ``make eval`` measures
    the crawl's harvest rate against."""
    write_pages(
        tmp_path,
        {
            "/index.html": links("/far/1.html", "/hub.html", "/a.html"),
            "/a.html": links("/index.html"),
            "/hub.html": links("/b.html", "/c.html"),
            "/b.html": links("/c.html"),
            "/c.html": "",
            "/far/1.html": links("/far/2.html"),
            "/far/2.html": links("/d.html"),
            "/d.html": "",
        },
    )
    graph = LinkGraph(tmp_path)
    labelled = {"/a.html", "/b.html", "/c.html", "/d.html"}
    order = best_order(graph, "/index.html", labelled, 50)
    assert order == [
        "/index.html",
        "/a.html",
        "/hub.html",
        "/b.html",
        "/c.html",
        "/far/1.html",
        "/far/2.html",
        "/d.html",
    ]
    assert best_order(graph, "/index.html", labelled, 4) == order[:4]
    # Once it has every labelled page, the rest of the budget finds nothing on topic.
    curve = ceiling_curve(graph, "/index.html", labelled, 10)
    assert len(curve) == 10
    assert curve[1] == 1 / 2
    assert curve[-1] == 4 / 10


def test_the_ceiling_follows_only_the_links_the_crawler_follows(tmp_path):
    """No translation, no page robots.txt forbids, no print view, no other host, no PDF:
    a labelled page behind one of those is out of reach of the crawl and of the ceiling."""
    write_pages(
        tmp_path,
        {
            "/index.html": (
                links("/private/a.html", "/print/b.html", "http://example.org/c.html")
                + '<a href="/guide.de.html" hreflang="de">Deutsch</a>'
                + links("/manual.pdf", "/open.html")
            ),
            "/private/a.html": "",
            "/print/b.html": "",
            "/guide.de.html": "",
            "/open.html": "",
        },
    )
    (tmp_path / "manual.pdf").write_bytes(b"%PDF-1.4")
    (tmp_path / "robots.txt").write_text("User-agent: *\nDisallow: /private/\n")
    labelled = {"/private/a.html", "/print/b.html", "/guide.de.html", "/manual.pdf", "/open.html"}
    assert best_order(LinkGraph(tmp_path), "/index.html", labelled, 50) == [
        "/index.html",
        "/open.html",
    ]


def test_the_ceiling_follows_the_links_the_sites_scripts_write(tmp_path):
    """As the crawl does (``TOPIC_SCRIPT_LINKS``): a contents tree a script writes, and a
    menu an inline script writes."""
    write_pages(
        tmp_path,
        {
            "/index.html": (
                '<script src="/toc.js"></script>'
                "<script>document.write('<a href=\"/b.html\">b</a>');</script>"
            ),
            "/a.html": "",
            "/b.html": "",
        },
    )
    (tmp_path / "toc.js").write_text("""menu.innerHTML = '<ul><li><a href="a.html">a</a></ul>';""")
    order = best_order(LinkGraph(tmp_path), "/index.html", {"/a.html", "/b.html"}, 50)
    assert order == ["/index.html", "/b.html", "/a.html"]


def test_a_labelled_page_fetched_again_at_another_address_counts_once():
    """LibreOffice's contents tree links ``datapilot.html?DbPAR=CALC``, its pages
    ``datapilot.html``: the crawl may fetch both, and has found one page."""
    paths = ["/", "/a.html", "/a.html", "/b.html", "/a.html"]
    assert first_hits(paths, {"/a.html", "/b.html"}) == [False, True, False, True, False]


def test_the_ceiling_of_the_demo_site_reaches_every_football_page(site):
    """Read from the generated site's files (GBK pages among them) as the crawler reads
    them: every football page is reachable from the seed, through the portal's hub page."""
    order = best_order(LinkGraph(site.root), site.seed_path, site.on_topic, 200)
    assert order[:2] == [site.seed_path, site.hub_path]
    assert set(order[2:]) == site.on_topic
    assert len(order) == len(site.on_topic) + 2
