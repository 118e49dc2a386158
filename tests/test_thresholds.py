"""The relevance threshold: fixed or adaptive, and pages that wait for their verdict."""

from __future__ import annotations

import pytest
from scrapy.settings import Settings

from tests.test_spider import crawl_seed, paths, read_jsonl, scrapy
from topicspider import settings as defaults
from topicspider.exceptions import ConfigError
from topicspider.thresholds import AdaptiveThreshold, FixedThreshold, Verdicts, check_settings

#: The demo topic, outweighed by a sport the demo site never mentions: every football page
#: scores below the default TOPIC_THRESHOLD (0.12), and every other page far below them.
HOCKEY_HEAVY = """\
足球 3
体育 2
比赛 2
联赛 2
球队 2
球员 2
进球 2
football 3
soccer 3
match 2
league 2
goal 2
曲棍球 12
hockey 12
菜谱 1
recipe 1
"""


def judged(verdicts) -> list[tuple[str, bool]]:
    return [(v.page, v.accepted) for v in verdicts]


def test_fixed_threshold_decides_every_page_at_once():
    verdicts = Verdicts(FixedThreshold(0.2), hold=5)
    assert verdicts.score(0.3, "a") is True
    assert verdicts.score(0.1, "b") is False
    assert judged(verdicts.new()) == [("a", True), ("b", False)]
    assert judged(verdicts.in_order()) == [("a", True), ("b", False)]
    assert not verdicts.pending


def test_adaptive_threshold_follows_the_best_pages_within_its_bounds():
    threshold = AdaptiveThreshold(0.12, 0.05, ratio=0.5, top=3)
    assert threshold.value == 0.05  # nothing seen yet: the floor
    values = []
    for relevance in (0.30, 0.01, 0.0, 0.14, 0.16, 0.02, 0.50, 0.90):
        threshold.observe(relevance)
        values.append(threshold.value)
    assert values == sorted(values)  # low pages after a good one do not lower it
    assert values[2] == 0.05  # half the median of (0.30, 0.01, 0) is below the floor
    assert values[3] == pytest.approx(0.5 * 0.14)  # the best three: 0.30, 0.14, 0.01
    assert values[-1] == 0.12  # half the median of (0.30, 0.50, 0.90) is above the ceiling


def test_a_page_between_the_bounds_waits_and_is_judged_by_what_came_after():
    verdicts = Verdicts(AdaptiveThreshold(0.12, 0.02, ratio=0.5, top=2), hold=2)
    # Judged at once, 0.08 would pass (the floor); better pages raise the bar to 0.1025.
    assert verdicts.score(0.08, "early") is True  # on topic for now: its links are followed
    verdicts.score(0.3, "sure")  # above the ceiling: accepted, to be stored at once...
    assert judged(verdicts.new()) == [("sure", True)]
    assert judged(verdicts.in_order()) == []  # ...and reported after "early"
    verdicts.score(0.11, "later")
    assert judged(verdicts.new()) == [("early", False)]
    assert judged(verdicts.in_order()) == [("early", False), ("sure", True)]
    verdicts.score(0.01, "noise")  # below the floor: dropped at once, reported after "later"
    verdicts.close()
    assert judged(verdicts.new()) == [("noise", False), ("later", True)]
    assert judged(verdicts.in_order()) == [("later", True), ("noise", False)]
    assert not verdicts.pending


def test_no_more_than_hold_pages_wait():
    verdicts = Verdicts(AdaptiveThreshold(0.9, 0.0, ratio=0.5, top=5), hold=3)
    stored, reported = [], []
    for n in range(20):
        verdicts.score(0.5, n)
        stored += [v.page for v in verdicts.new()]
        reported += [v.page for v in verdicts.in_order()]
        assert len(verdicts.pending) <= 3
    verdicts.close()
    stored += [v.page for v in verdicts.new()]
    reported += [v.page for v in verdicts.in_order()]
    assert stored == reported == list(range(20))


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"TOPIC_THRESHOLD_MODE": "median"}, "TOPIC_THRESHOLD_MODE='median'"),
        ({"TOPIC_THRESHOLD_MIN": 0.2}, "TOPIC_THRESHOLD_MIN=0.2"),
        ({"TOPIC_THRESHOLD_RATIO": 0}, "TOPIC_THRESHOLD_RATIO=0"),
        ({"TOPIC_THRESHOLD_HOLD": "soon"}, "'soon'"),
    ],
)
def test_unusable_settings_are_named(overrides, message):
    settings = Settings()
    settings.setmodule(defaults)
    settings.update(overrides)
    with pytest.raises(ConfigError, match=message):
        check_settings(settings)


def test_a_bad_mode_stops_the_crawl_before_any_request():
    result = scrapy(
        "crawl", "topic", "-a", "seeds=http://127.0.0.1:9/", "-a", "keywords=sports",
        "-s", "TOPIC_THRESHOLD_MODE=median",
    )  # fmt: skip
    assert result.returncode == 2
    assert "TOPIC_THRESHOLD_MODE='median': expected one of adaptive, fixed" in result.stderr
    assert "Spider opened" not in result.stderr


@pytest.fixture(scope="module")
def hockey_keywords(tmp_path_factory):
    path = tmp_path_factory.mktemp("keywords") / "hockey-heavy.txt"
    path.write_text(HOCKEY_HEAVY, "utf-8")
    return path


def test_adaptive_threshold_stores_the_on_topic_pages_the_fixed_one_misses(
    site, site_url, hockey_keywords, tmp_path
):
    seed = f"{site_url}{site.seed_path}"
    fixed = crawl_seed(
        seed, tmp_path / "fixed", "TOPIC_THRESHOLD_MODE=fixed", keywords=str(hockey_keywords)
    )
    assert fixed.returncode == 0, fixed.stderr[-3000:]
    adaptive = crawl_seed(seed, tmp_path / "adaptive", keywords=str(hockey_keywords))
    assert adaptive.returncode == 0, adaptive.stderr[-3000:]

    fetched = read_jsonl(tmp_path / "adaptive" / "f.jsonl")
    assert max(row["relevance"] for row in fetched) < 0.12  # the fixed bar is out of reach
    assert paths(read_jsonl(tmp_path / "fixed" / "pages" / "index.jsonl")) == []
    stored = set(paths(read_jsonl(tmp_path / "adaptive" / "pages" / "index.jsonl")))
    assert len(stored & site.on_topic) >= 0.8 * len(site.on_topic)
    assert stored <= site.on_topic


def test_pages_still_waiting_when_the_crawl_stops_are_judged_and_stored(
    site, site_url, hockey_keywords, tmp_path
):
    # Every page between the bounds waits until the end; the page budget ends the crawl.
    result = crawl_seed(
        f"{site_url}{site.seed_path}",
        tmp_path,
        "TOPIC_THRESHOLD_HOLD=1000",
        "CLOSESPIDER_PAGECOUNT=14",
        keywords=str(hockey_keywords),
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "closespider_pagecount" in result.stderr
    log = read_jsonl(tmp_path / "f.jsonl")
    accepted = [row for row in log if row["accepted"]]
    assert accepted, "the budget ended the crawl before any football page"
    assert all(row["relevance"] < 0.12 for row in accepted)  # so each of them waited
    assert set(paths(read_jsonl(tmp_path / "pages" / "index.jsonl"))) == set(paths(accepted))
    # Every scored page got a verdict, once, in fetch order.
    assert len(paths(log)) == len(set(paths(log)))
    assert f"'topic/accepted': {len(accepted)}," in result.stderr
