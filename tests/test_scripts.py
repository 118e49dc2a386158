from topicspider.analysis import Analyzer
from topicspider.keywords import KeywordVector
from topicspider.scripts import (
    SiteScripts,
    page_scripts,
    script_html,
    script_text,
    write_inline,
    written_page,
)
from topicspider.text import extract_page, parse_html

#: LibreOffice's help fills its empty contents ``div`` so, a line continued by each ``\``.
CONTENTS_JS = """document.getElementById("Contents").innerHTML='\\
    <ul><li><input type="checkbox" id="03"><label for="03">电子表格 (Calc)</label><ul>\\
    <li><a target="_top" href="text/scalc/datapilot.html?DbPAR=CALC">数据透视表</a></li>\\
    <li><a target="_top" href="text/scalc/print.html?DbPAR=CALC">打印工作表</a></li>\\
    </ul></li></ul>\\
';
"""


def test_the_links_a_script_writes_are_read_from_its_strings():
    assert script_html(CONTENTS_JS.replace("\n", "\r\n")) == script_html(CONTENTS_JS)
    html = script_html(CONTENTS_JS)
    links = extract_page(parse_html(f"<html><body>{html}</body></html>"), "http://127.0.0.1/")
    assert {link.anchor for link in links.links.values()} == {"数据透视表", "打印工作表"}
    assert "http://127.0.0.1/text/scalc/datapilot.html?DbPAR=CALC" in links.links


def test_escapes_in_a_script_are_the_characters_they_stand_for():
    script = r"""document.write("<a href=\"/\u8db3\u7403.html\">\u{8db3}\x41</a>");"""
    assert script_html(script) == '<a href="/足球.html">足A</a>'


def test_a_script_that_writes_no_link_writes_nothing():
    assert script_html("var menu = '<b>菜单</b>'; x = a < b ? 'x' : \"y\";") == ""
    assert script_html("") == ""


def test_an_address_built_from_data_is_no_link():
    """Joined around a variable, a template's placeholder, or code cut out of a library:
    from a page's ``<base>`` each would be another page, or a bogus one. The link stays,
    without its address; the script's other links are read."""
    written = "menu.innerHTML = '<a href=\"/football/\">足球</a>';"
    for built in [
        "html += '<li><a href=\"' + item.url + '\">' + item.title + '</a></li>';",
        "html += '<li><a href=\"/news/' + item.id + '.html\">' + item.title + '</a></li>';",
        'el.innerHTML = `<li><a href="${base}/2.html">${n}</a></li>`;',
        '$(x).append("<li><a href=\'" + "]=n.expr.pseudos,(function(){var" + "\'></a></li>");',
    ]:
        html = script_html(built + written)
        assert html.startswith("<li><a>"), html
        assert html.endswith('<a href="/football/">足球</a>'), html


def test_a_script_that_writes_no_markup_holds_data_not_the_page():
    data = 'var data = {"html": "<a href=\\"/x.html\\">足球数据</a>"};'
    assert script_html(data) == ""
    assert script_html(data + " $('#news').html(data.html);") != ""


def test_a_surrogate_pair_is_one_character_and_a_lone_half_none():
    """As JavaScript writes an emoji (minifiers, JSON): before, the page was not read."""
    pair = r"document.write('<a href=\"/1.html\">足球 \ud83d\ude00 \udc00</a>');"
    assert script_html(pair) == '<a href="/1.html">足球 😀 \ufffd</a>'
    html = f"<html><body><script>{pair}</script></body></html>"
    analyzer = Analyzer(KeywordVector({"足球": 1.0}), scripts=True)
    page = analyzer.analyze("http://127.0.0.1/", html.encode(), "text/html; charset=utf-8")
    assert [link.url for link in page.links] == ["http://127.0.0.1/1.html"]


def test_what_an_inline_script_writes_comes_before_the_text_after_it():
    html = (
        "<html><body><p>前面 <script>document.write('写的 <a href=\"/f.html\">足球中间</a> 尾');"
        "</script> 后面</p></body></html>"
    )
    root = parse_html(html)
    write_inline(root)
    paragraph = root.find("body/p")
    script, link = paragraph
    assert (script.tail.split(), link.text, link.tail.split()) == (
        ["写的"],
        "足球中间",
        ["尾", "后面"],
    )


def test_scripts_of_every_javascript_type_run_and_others_do_not():
    write = "document.write('<a href=\"/{0}.html\">{0}</a>');"
    types = ["application/x-javascript", "text/jscript", " text/javascript1.2 ", "text/template"]
    html = "".join(
        f'<script type="{kind}">{write.format(n)}</script>' for n, kind in enumerate(types)
    )
    root = parse_html(f"<html><body>{html}</body></html>")
    write_inline(root)
    assert [a.get("href") for a in root.iter("a")] == ["/0.html", "/1.html", "/2.html"]


def test_inline_document_write_puts_its_links_where_the_script_is():
    html = (
        '<html><body><p>本站导航</p><script>document.write(\'<p><a href="/football/">'
        "足球新闻</a></p>');</script><p>页脚</p></body></html>"
    )
    analyzer = Analyzer(KeywordVector({"足球": 1.0}), scripts=True)
    page = analyzer.analyze("http://127.0.0.1/", html.encode(), "text/html; charset=utf-8")
    assert [link.url for link in page.links] == ["http://127.0.0.1/football/"]
    assert page.links[0].anchor > 0
    plain = Analyzer(KeywordVector({"足球": 1.0}))
    assert plain.analyze("http://127.0.0.1/", html.encode(), "text/html").links == []


def test_a_page_names_the_scripts_it_loads_from_the_crawls_sites_only():
    html = (
        '<html><head><base href="http://127.0.0.1/help/">'
        '<script src="contents.js"></script><script src="/js/menu.js?v=3"></script>'
        '<script src="https://cdn.example.com/jquery.js"></script>'
        '<script src="data.json"></script><script type="text/template" src="t.js"></script>'
        '</head><body><div id="menu"></div></body></html>'
    )
    scripts = page_scripts(parse_html(html), "http://127.0.0.1/help/", "utf-8", ("127.0.0.1",))
    assert scripts == ("http://127.0.0.1/help/contents.js", "http://127.0.0.1/js/menu.js?v=3")


def test_a_script_in_the_head_counts_only_where_the_page_leaves_an_element_empty():
    """A script writes where it stands, or into an element left empty for it: a Sphinx
    page's ``doctools.js`` and ``jquery.js`` in its head write nothing it shows."""
    head = '<html><head><script src="/_static/doctools.js"></script></head>'
    for body, scripts in [
        ('<body><div id="searchbox"><p>Search</p></div><a id="top"></a></body>', ()),
        (
            '<body><div id="Contents" class="tree"></div></body>',
            ("http://127.0.0.1/_static/doctools.js",),
        ),
    ]:
        root = parse_html(head + body + "</html>")
        assert page_scripts(root, "http://127.0.0.1/", "utf-8", ("127.0.0.1",)) == scripts


def test_the_analyzer_names_the_scripts_and_the_base_their_links_start_from():
    html = '<html><head><base href="../"></head><body><script src="c.js"></script></body></html>'
    analyzer = Analyzer(KeywordVector({"足球": 1.0}), scripts=True)
    page = analyzer.analyze("http://127.0.0.1/a/b.html", html.encode(), "text/html")
    assert page.scripts == ("http://127.0.0.1/c.js",)
    assert page.base_url == "http://127.0.0.1/"
    assert (
        Analyzer(KeywordVector({"足球": 1.0}))
        .analyze("http://127.0.0.1/a/b.html", html.encode(), "text/html")
        .scripts
        == ()
    )


def test_a_script_is_read_in_its_declared_charset_else_in_its_pages():
    gbk = "document.write('<a href=\"/1.html\">足球</a>');".encode("gbk")
    assert "足球" in script_text(gbk, "application/javascript", "gb18030")
    assert "足球" in script_text(gbk, "text/javascript; charset=gbk", "utf-8")
    assert script_text(b"<html><body>Not Found</body></html>", "text/html", "utf-8") == ""


def test_what_a_script_writes_is_read_as_its_page_reads_its_links():
    """From the page's base address, a query in the page's charset."""
    html = '<a href="s?q=足球">足球</a>'
    analyzer = Analyzer(KeywordVector({"足球": 1.0}))
    page = analyzer.analyze(
        "http://127.0.0.1/x/y.html",
        written_page(html, "http://127.0.0.1/x/", "gb18030"),
        "text/html",
    )
    assert [link.url for link in page.links] == ["http://127.0.0.1/x/s?q=%D7%E3%C7%F2"]


def test_a_script_is_the_sites_when_a_seed_or_a_second_page_loads_it():
    scripts = SiteScripts(100)
    assert not scripts.due("http://127.0.0.1/js/contents.js", seed=False)
    assert scripts.due("http://127.0.0.1/js/contents.js?t=1002", seed=False)
    assert not scripts.due("http://127.0.0.1/js/contents.js?t=1003", seed=False)  # once
    assert not scripts.due("http://127.0.0.1/implementors/trait.Try.js", seed=False)
    assert scripts.due("http://127.0.0.1/js/nav.js", seed=True)
    assert not scripts.due("http://127.0.0.1/js/nav.js", seed=False)


def test_a_script_name_is_barren_when_two_copies_wrote_no_link_and_none_did():
    scripts = SiteScripts(100)
    scripts.record("http://127.0.0.1/std/sidebar-items.js", False)
    assert not scripts.is_barren("http://127.0.0.1/core/sidebar-items.js")
    scripts.record("http://127.0.0.1/alloc/sidebar-items.js", False)  # or could not be had
    assert scripts.is_barren("http://127.0.0.1/core/sidebar-items.js")
    assert not scripts.is_barren("http://127.0.0.1/core/contents.js")
    # Digits are one: versioned names are one script.
    scripts.record("http://127.0.0.1/a/menu-1.js", False)
    scripts.record("http://127.0.0.1/b/menu-22.js", False)
    assert scripts.is_barren("http://127.0.0.1/c/menu-333.js")
    scripts.record("http://127.0.0.1/a/toc.js", True)
    scripts.record("http://127.0.0.1/b/toc.js", False)
    scripts.record("http://127.0.0.1/c/toc.js", False)
    assert not scripts.is_barren("http://127.0.0.1/d/toc.js")
