import pytest
from scrapy import Request
from scrapy.utils.test import get_crawler

from tests.test_spider_focus import ARTICLE, ONE_AT_A_TIME, crawl, page, served
from topicspider.pqueues import RESERVE_KEY, SCORE_KEY
from topicspider.relevance import reserve_score
from topicspider.siblings import PARENT_KEY, SiblingDemotionMiddleware, SiblingYields

RECIPE = (
    "<p>西红柿炒鸡蛋的做法：鸡蛋打散加少许盐，西红柿切块。锅中放油，先炒鸡蛋盛出，"
    "再炒西红柿出汁，倒入鸡蛋翻炒均匀，加糖和葱花即可出锅。</p>"
)
RECIPES = 25
ARTICLES = 5


def test_a_pages_links_are_demoted_once_enough_of_them_came_back_off_topic():
    siblings = SiblingYields(barren=10)
    for fetched in range(1, 41):
        siblings.record("http://a.cn/list.html", relevant=False)
        expected = 1.0 if fetched < 10 else 0.5 if fetched < 20 else 0.25 if fetched < 40 else 0.125
        assert siblings.factor("http://a.cn/list.html") == expected
    assert siblings.factor("http://a.cn/other.html") == 1.0
    assert siblings.factor(None) == 1.0


def test_one_relevant_sibling_is_enough_to_keep_a_pages_links_as_they_are():
    siblings = SiblingYields(barren=10)
    siblings.record("http://a.cn/list.html", relevant=True)
    for _ in range(30):
        siblings.record("http://a.cn/list.html", relevant=False)
    assert siblings.factor("http://a.cn/list.html") == 1.0


def demotion(meta: dict) -> Request | None:
    """What the middleware makes of a request for a link of a page ten of whose links
    came back off topic."""
    crawler = get_crawler(settings_dict={"TOPIC_BARREN_SIBLINGS": 10})
    crawler.spider = type("Spider", (), {"siblings": SiblingYields(barren=10)})()
    for _ in range(10):
        crawler.spider.siblings.record("http://a.cn/list.html", relevant=False)
    request = Request("http://a.cn/1.html", meta={PARENT_KEY: "http://a.cn/list.html", **meta})
    return SiblingDemotionMiddleware.from_crawler(crawler).process_request(request)


@pytest.mark.parametrize(("score", "demoted"), [(0.4, 0.2), (-3.0, -6.0)])
def test_a_demoted_link_scores_lower_whatever_the_sign_of_its_score(score, demoted):
    """Breadth-first scores are negative."""
    assert demotion({SCORE_KEY: score}).meta[SCORE_KEY] == pytest.approx(demoted)


def test_links_in_reserve_are_not_demoted():
    """They wait breadth-first behind every other link already."""
    assert demotion({SCORE_KEY: reserve_score(0.4, 3), RESERVE_KEY: True}) is None


@pytest.fixture(scope="module")
def list_site(tmp_path_factory):
    """A football page linking two lists alike, the first a long one of recipes; only the
    second list's pages are about football."""
    root = tmp_path_factory.mktemp("list-site")
    (root / "index.html").write_text(
        page(
            "足球新闻",
            ARTICLE + '<p><a href="/recipes/index.html">目录</a></p>'
            '<p><a href="/more/index.html">更多</a></p>',
        )
    )
    for folder, count, title, text in (
        ("recipes", RECIPES, "菜谱", RECIPE),
        ("more", ARTICLES, "文章", ARTICLE),
    ):
        (root / folder).mkdir()
        items = "".join(
            f'<li><a href="/{folder}/{n}.html">{title}{n}</a></li>' for n in range(count)
        )
        (root / folder / "index.html").write_text(page(title, RECIPE + f"<ul>{items}</ul>"))
        for n in range(count):
            (root / folder / f"{n}.html").write_text(page(f"{title}{n}", text))
    yield from served(root)


ARTICLE_PATHS = {f"/more/{n}.html" for n in range(ARTICLES)}
SETTINGS = (*ONE_AT_A_TIME, "TOPIC_DUPLICATE_DISTANCE=-1")  # the articles are alike


def last_article(fetched: list[str]) -> int:
    return max(fetched.index(path) for path in ARTICLE_PATHS)


def test_the_crawl_turns_from_a_list_whose_pages_come_back_off_topic(list_site, tmp_path):
    demoted = crawl(f"{list_site}/index.html", tmp_path / "on", *SETTINGS)
    plain = crawl(f"{list_site}/index.html", tmp_path / "off", *SETTINGS, "TOPIC_BARREN_SIBLINGS=0")
    # Three pages of lists, ten recipes, then the football articles ...
    assert last_article(demoted.fetched) < 3 + 10 + ARTICLES
    assert "'topic/demoted'" in demoted.log
    # ... where, without the demotion, they wait for every recipe.
    assert last_article(plain.fetched) >= 3 + RECIPES
    # Put back, not dropped: both crawls fetch every page once and store the same.
    assert sorted(demoted.fetched) == sorted(plain.fetched)
    assert len(set(demoted.fetched)) == len(demoted.fetched) == 3 + RECIPES + ARTICLES
    assert sorted(demoted.stored) == sorted(plain.stored)
    assert set(demoted.stored) >= ARTICLE_PATHS


def test_a_crawl_with_a_jobdir_puts_the_demoted_links_back_too(list_site, tmp_path):
    """The frontier on disk keeps a request's row until the engine is done with it: the
    demoted copy, pushed before that, takes the row over instead of being dropped."""
    result = crawl(f"{list_site}/index.html", tmp_path, *SETTINGS, f"JOBDIR={tmp_path / 'job'}")
    assert last_article(result.fetched) < 3 + 10 + ARTICLES
    assert "'topic/demoted'" in result.log
    assert len(set(result.fetched)) == len(result.fetched) == 3 + RECIPES + ARTICLES
    assert set(result.stored) >= ARTICLE_PATHS


def test_a_crawl_paused_without_the_demotion_resumes_with_it(list_site, tmp_path):
    """The resumed run's ``TOPIC_BARREN_SIBLINGS`` holds. Before, the paused run's 0 came
    back with what it had learned, and the resumed crawl divided by it: every request
    failed with ``ZeroDivisionError`` and the crawl ended, fetching nothing, with status 0."""
    job = f"JOBDIR={tmp_path / 'job'}"
    crawl(
        f"{list_site}/index.html",
        tmp_path,
        *SETTINGS,
        job,
        "TOPIC_BARREN_SIBLINGS=0",
        "CLOSESPIDER_PAGECOUNT=3",
    )
    result = crawl(f"{list_site}/index.html", tmp_path, *SETTINGS, job)
    assert "ZeroDivisionError" not in result.log
    assert "'topic/demoted'" in result.log
    assert len(set(result.fetched)) == len(result.fetched) == 3 + RECIPES + ARTICLES
    assert set(result.stored) >= ARTICLE_PATHS


def test_a_resumed_crawl_demotes_at_the_count_given_now():
    saved = SiblingYields(barren=20)
    for _ in range(10):
        saved.record("http://a.cn/list.html", relevant=False)
    resumed = SiblingYields(barren=5)
    resumed.resume(saved)
    assert resumed.factor("http://a.cn/list.html") == 0.25


def test_a_worker_of_a_crawl_in_redis_turns_from_the_list_too(list_site, redis_server, tmp_path):
    """The demoted request goes back to the shared frontier; the one it replaces is done."""
    result = crawl(
        f"{list_site}/index.html",
        tmp_path,
        *SETTINGS,
        f"REDIS_URL={redis_server.url}",
        "TOPIC_CRAWL_ID=siblings",
        "REDIS_IDLE_TIMEOUT=2",
    )
    assert last_article(result.fetched) < 3 + 10 + ARTICLES
    assert "'topic/demoted'" in result.log
    assert sorted(result.fetched) == sorted(set(result.fetched))
    assert len(result.fetched) == 3 + RECIPES + ARTICLES
