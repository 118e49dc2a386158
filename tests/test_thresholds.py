"""The relevance threshold: fixed or adaptive."""

from __future__ import annotations

import pytest
from scrapy.settings import Settings

from tests.test_spider import crawl_seed, paths, read_jsonl, scrapy
from topicspider import settings as defaults
from topicspider.exceptions import ConfigError
from topicspider.thresholds import AdaptiveThreshold, FixedThreshold, check_settings

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
hockey 18
菜谱 1
recipe 1
"""


def test_fixed_threshold_never_moves():
    threshold = FixedThreshold(0.2)
    for relevance in (0.9, 0.01, 0.5):
        threshold.observe(relevance)
        assert threshold.value == 0.2


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


def test_a_resumed_threshold_keeps_what_it_learned_under_the_settings_given_now():
    saved = AdaptiveThreshold(0.12, 0.05, ratio=0.5, top=3)
    for relevance in (0.30, 0.14, 0.16):
        saved.observe(relevance)
    resumed = AdaptiveThreshold(0.5, 0.05, ratio=0.9, top=3)
    resumed.resume(saved)
    assert resumed.value == pytest.approx(0.9 * 0.16)  # the same best pages, the new ratio
    fixed = FixedThreshold(0.3)
    fixed.resume(saved)
    assert fixed.value == 0.3
    fresh = AdaptiveThreshold(0.12, 0.05, ratio=0.5, top=3)
    fresh.resume(FixedThreshold(0.3))  # a fixed threshold learned nothing
    assert fresh.value == 0.05


def test_the_adaptive_threshold_settles_once_its_top_pages_score_or_it_is_at_its_ceiling():
    threshold = AdaptiveThreshold(0.12, 0.05, ratio=0.5, top=3)
    settled = []
    for relevance in (0.0, 0.08, 0.0, 0.09, 0.01):
        threshold.observe(relevance)
        settled.append(threshold.settled)
    assert settled == [False, False, False, False, True]  # pages that score 0 tell nothing
    high = AdaptiveThreshold(0.12, 0.05, ratio=1.0, top=3)
    high.observe(0.9)
    assert not high.settled
    high.observe(0.8)  # the median of (0.9, 0.8, 0) is above the ceiling: it goes no higher
    assert high.value == 0.12
    assert high.settled
    assert FixedThreshold(0.2).settled


def test_a_crawl_resumed_with_another_threshold_uses_it(site_url, tmp_path):
    """JOBDIR keeps what the crawl learned, not the settings it was started with: a resumed
    crawl given a fixed threshold no page reaches stores nothing more."""
    jobdir = f"JOBDIR={tmp_path / 'job'}"
    # From the sports section: from the front page, 15 pages may all be off topic (the
    # section's link says nothing of football, and which tied link goes first varies).
    seed = f"{site_url}/sports/index.html"
    first = crawl_seed(seed, tmp_path, jobdir, "CLOSESPIDER_PAGECOUNT=15")
    assert first.returncode == 0, first.stderr[-2000:]
    stored = len(read_jsonl(tmp_path / "pages" / "index.jsonl"))
    assert stored
    second = crawl_seed(
        seed, tmp_path, jobdir, "TOPIC_THRESHOLD_MODE=fixed", "TOPIC_THRESHOLD=0.99"
    )
    assert second.returncode == 0, second.stderr[-2000:]
    assert "Resuming crawl" in second.stderr
    assert "'topic/dropped'" in second.stderr
    assert len(read_jsonl(tmp_path / "pages" / "index.jsonl")) == stored


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"TOPIC_THRESHOLD_MODE": "median"}, "TOPIC_THRESHOLD_MODE='median'"),
        ({"TOPIC_THRESHOLD_MIN": 0.2}, "TOPIC_THRESHOLD_MIN=0.2, TOPIC_THRESHOLD=0.12: "),
        # Before, this named TOPIC_THRESHOLD_MIN alone, a setting the user had not touched.
        ({"TOPIC_THRESHOLD": 0.03}, "TOPIC_THRESHOLD_MIN=0.05, TOPIC_THRESHOLD=0.03: "),
        ({"TOPIC_THRESHOLD_RATIO": 0}, "TOPIC_THRESHOLD_RATIO=0"),
        ({"TOPIC_LISTED_THRESHOLD": -0.1}, "TOPIC_LISTED_THRESHOLD=-0.1"),
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
