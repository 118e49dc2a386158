from topicspider.urls import link_url, url_words


def test_url_words():
    assert url_words("http://127.0.0.1/library/asyncio-task.html?x=1") == "library asyncio task x 1"
    assert "体育" in url_words("http://127.0.0.1/%E4%BD%93%E8%82%B2/index.html")


def test_url_words_read_a_query_in_the_pages_encoding():
    """Browsers send a link's query in its page's encoding, and its path in UTF-8."""
    assert url_words("http://127.0.0.1/tag.php?name=%D7%E3%C7%F2", "gbk") == "tag name 足球"
    utf8 = "http://127.0.0.1/%E4%BD%93%E8%82%B2/?name=%E8%B6%B3%E7%90%83"
    assert url_words(utf8, "gbk") == "体育 name 足球"


def test_url_words_read_a_gbk_path_in_the_pages_encoding():
    """A GBK site's own links to its ``/足球/`` section. Before, the path was read as UTF-8
    only: the link scored as ``/misc/1.html`` did."""
    assert url_words("http://127.0.0.1/%D7%E3%C7%F2/1.html", "gbk") == "足球 1"


def test_a_default_port_is_left_out_of_an_address():
    """``http://h:80/x`` is ``http://h/x``: written so, it would be fetched twice."""
    base = "http://127.0.0.1/"
    assert link_url("http://127.0.0.1:80/news/1.html", base) == "http://127.0.0.1/news/1.html"
    assert link_url("https://127.0.0.1:443/?q=1", base) == "https://127.0.0.1/?q=1"
    assert (
        link_url("/s?wd=足球", "http://127.0.0.1:80/") == "http://127.0.0.1/s?wd=%E8%B6%B3%E7%90%83"
    )
    assert link_url("http://127.0.0.1:8080/x", base) == "http://127.0.0.1:8080/x"
    assert link_url("https://127.0.0.1:80/x", base) == "https://127.0.0.1:80/x"


def test_an_address_has_its_host_in_lower_case_as_scrapy_requests_do():
    """Written ``http://A.CN/x``, a link was known apart from the request Scrapy makes of it
    (``http://a.cn/x``): a page a list named so was never found listed."""
    base = "http://a.cn/"
    assert link_url("http://A.CN/League/1.html", base) == "http://a.cn/League/1.html"
    assert link_url("HTTP://Ann:Pw@WWW.A.cn:80/X?Q=A", base) == "http://Ann:Pw@www.a.cn/X?Q=A"
    assert link_url("/Rel/Path", "http://a.cn/") == "http://a.cn/Rel/Path"
