from scrapy import Request
from scrapy.utils.request import fingerprint

from topicspider.fingerprints import SessionlessFingerprinter

fingerprinter = SessionlessFingerprinter()


def redirect(url: str, source: str) -> Request:
    return Request(url, meta={"redirect_urls": [source]})


def test_a_url_without_session_ids_has_scrapys_fingerprint():
    request = Request("http://a.cn/news.jsp?id=9&page=2")
    assert fingerprinter.fingerprint(request) == fingerprint(request)


def test_session_ids_and_tracking_parameters_do_not_make_another_page():
    def of(url: str) -> bytes:
        return fingerprinter.fingerprint(Request(url))

    page = of("http://a.cn/news.jsp?id=9")
    assert of("http://a.cn/news.jsp;jsessionid=0AF3B2C4?id=9") == page
    assert of("http://a.cn/news.jsp?id=9&utm_source=weibo") == page
    assert of("http://a.cn/news.jsp?id=8") != page


def test_a_redirect_to_another_page_with_an_id_is_that_page():
    landed = redirect("http://a.cn/index.jsp;jsessionid=0AF3B2C4", "http://a.cn/start.jsp")
    assert fingerprinter.fingerprint(landed) == fingerprinter.fingerprint(
        Request("http://a.cn/index.jsp")
    )


def test_a_redirect_that_only_gives_the_page_an_id_is_not_the_request_it_came_from():
    source = "http://a.cn/index.jsp"
    given = redirect("http://a.cn/index.jsp;jsessionid=0AF3B2C4", source)
    assert fingerprinter.fingerprint(given) != fingerprinter.fingerprint(Request(source))
