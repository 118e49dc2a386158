"""The relevance threshold: fixed or adaptive, and pages that wait for their verdict."""

from __future__ import annotations

import pytest
from scrapy.settings import Settings

from topicspider import settings as defaults
from topicspider.exceptions import ConfigError
from topicspider.thresholds import AdaptiveThreshold, FixedThreshold, Verdicts, check_settings


def judged(verdicts: Verdicts) -> list[tuple[str, bool]]:
    return [(v.page, v.accepted) for v in verdicts]


def test_fixed_threshold_decides_every_page_at_once():
    verdicts = Verdicts(FixedThreshold(0.2), hold=5)
    assert verdicts.score(0.3, "a") is True
    assert verdicts.score(0.1, "b") is False
    assert judged(verdicts.decided()) == [("a", True), ("b", False)]
    assert not verdicts.pending


def test_adaptive_threshold_follows_the_best_pages_within_its_bounds():
    threshold = AdaptiveThreshold(0.12, 0.05, ratio=0.5, top=3)
    assert threshold.value == 0.12  # nothing seen yet: the fixed bar
    values = []
    for relevance in (0.0, 0.02, 0.10, 0.14, 0.16, 0.01, 0.30, 0.90):
        threshold.observe(relevance)
        values.append(threshold.value)
    assert values == sorted(values)  # it never goes down
    assert values[2] == 0.05  # half the median of (0, 0.02, 0.10) is below the floor
    assert values[4] == pytest.approx(0.5 * 0.14)
    assert values[-1] == 0.12  # half the median of (0.16, 0.30, 0.90) is above the ceiling


def test_a_page_between_the_bounds_waits_and_is_judged_by_what_came_after():
    verdicts = Verdicts(AdaptiveThreshold(0.12, 0.02, ratio=0.5, top=2), hold=2)
    # Judged at once, 0.08 would pass (half of 0.08); better pages raise the bar to 0.1025.
    verdicts.score(0.08, "early")
    verdicts.score(0.3, "sure")  # above the ceiling: accepted at once, handed out in order
    assert judged(verdicts.decided()) == []
    verdicts.score(0.11, "later")
    assert judged(verdicts.decided()) == [("early", False), ("sure", True)]
    verdicts.score(0.01, "noise")  # below the floor: dropped at once, after "later"
    assert judged(verdicts.close()) == [("later", True), ("noise", False)]
    assert not verdicts.pending


def test_no_more_than_hold_pages_wait():
    verdicts = Verdicts(AdaptiveThreshold(0.9, 0.0, ratio=0.5, top=5), hold=3)
    handed_out = []
    for n in range(20):
        verdicts.score(0.5, n)
        handed_out += [v.page for v in verdicts.decided()]
        assert len(verdicts.pending) <= 3
    handed_out += [v.page for v in verdicts.close()]
    assert handed_out == list(range(20))


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
