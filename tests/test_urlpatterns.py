import doctest

import topicspider.urlpatterns
from topicspider.urlpatterns import PatternStats, is_noise, template


def test_doctests():
    assert doctest.testmod(topicspider.urlpatterns).failed == 0


def test_urls_of_one_kind_share_a_template():
    assert template("http://a.cn/news/2024/10/123.html") == template(
        "http://a.cn/news/2023/1/7.html"
    )
    assert template("http://a.cn/news/1.html") != template("http://a.cn/video/1.html")
    assert template("http://a.cn/list?page=2&cat=3") == template("http://a.cn/list?cat=9&page=1")


def test_noise_urls():
    assert is_noise("http://a.cn/article.jsp;jsessionid=ABCDEF0123?id=3")
    assert is_noise("http://a.cn/calendar/2031/07/")
    assert is_noise("http://a.cn/news/5.html?print=1")
    assert not is_noise("http://a.cn/sports/football/2024/derby.html")
    assert not is_noise("http://a.cn/archive.php?year=2024")


def test_yield_is_learned_and_smoothed():
    stats = PatternStats(prior=0.2, strength=4, noise_after=10)
    assert stats.yield_of(template("http://a.cn/sports/1.html")) == 0.2
    for i in range(8):
        stats.record(template(f"http://a.cn/sports/{i}.html"), accepted=True)
        stats.record(template(f"http://a.cn/shop/{i}.html"), accepted=False)
    assert stats.yield_of(template("http://a.cn/sports/99.html")) > 0.7
    assert stats.yield_of(template("http://a.cn/shop/99.html")) < 0.1
    assert not stats.is_barren(template("http://a.cn/shop/99.html"))
    for i in range(8, 12):
        stats.record(template(f"http://a.cn/shop/{i}.html"), accepted=False)
    assert stats.is_barren(template("http://a.cn/shop/99.html"))
    assert not stats.is_barren(template("http://a.cn/sports/99.html"))


def test_state_round_trip():
    stats = PatternStats()
    stats.record(template("http://a.cn/x/1.html"), accepted=True)
    copy = PatternStats()
    copy.load(stats.state())
    assert copy.yield_of(template("http://a.cn/x/2.html")) == stats.yield_of(
        template("http://a.cn/x/2.html")
    )
