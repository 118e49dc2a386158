"""Keyword extraction without a crawler: counting, idf and ranking on plain values."""

from __future__ import annotations

from collections import Counter

import pytest

from topicspider.extraction import (
    PageTerms,
    SharedText,
    background_idf,
    default_idf,
    html_text,
    rank_terms,
    scale_weights,
    spell,
    term_counts,
    with_subwords,
)
from topicspider.tokens import subwords


def test_terms_are_counted_as_the_crawler_counts_them():
    page = term_counts("足球比赛", "Football leagues and the match", title_weight=3.0)
    counts = with_subwords(page, {"足球"}).counts
    assert counts["足球比赛"] == 3.0
    assert counts["足球"] == 3.0  # a sub-word of the compound, as the crawler scores it
    assert counts["leagu"] == 1.0  # English words stemmed: league and leagues meet
    assert "the" not in counts
    assert all(len(term) > 1 for term in counts)


def test_a_letter_or_a_number_is_a_term_with_the_word_it_is_joined_to():
    """``sha-1`` keeps its ``1``, but a keyword file's ``1`` alone would match nothing: the
    term is ``sha 1``, as the keyword ``sha-1`` is read, and ``b-tree`` is no mere ``tree``."""
    page = term_counts("SHA-1 and SHA-256", "SHA-1 digests, B-trees, a B-tree, UTF-8")
    assert {"sha", "digest", "tree", "utf"} <= page.counts.keys()
    assert not {"1", "256", "b", "8"} & page.counts.keys()
    assert page.counts["sha 1"] == 3.0 + 1.0  # the title's and the body's
    assert page.counts["b tree"] == 2.0
    assert page.counts["sha 256"] == 3.0
    ranked = [("b tree", 2.0), ("sha 1", 1.0)]
    assert spell(ranked, [page]) == [("b-trees", 2.0), ("sha-1", 1.0)]
    assert term_counts("", "使用B-tree索引").counts["b tree"] == 1.0
    assert "225" not in term_counts("An-225", "the An-225 cargo plane").counts


def test_every_joined_term_of_a_long_list_is_counted():
    """A package list's ``item-1`` … ``item-3000``: each is counted once, in one pass (the
    terms were looked for one by one, 15 s for 8,000 of them)."""
    counts = term_counts("", " ".join(f"item-{n}" for n in range(3000))).counts
    assert all(counts[f"item {n}"] == 1.0 for n in range(3000))


def test_a_joined_term_the_samples_share_is_left_out():
    """A footer every sample has (``E-mail us``, ``UTF-8``) gives no term, joined or not."""
    footer = "Write to us by E-mail; every page is written in UTF-8 for you."
    texts = [(f"B-tree {n}", f"Chapter {n} of the manual. {footer}") for n in range(4)]
    counts = term_counts(*texts[0], shared=SharedText(texts)).counts
    assert counts["b tree"] == 3.0  # the title's
    assert not {"e mail", "utf 8", "mail", "utf"} & counts.keys()


def test_pieces_of_words_are_not_terms():
    """jieba's dictionary holds 务器 and 据库, pieces of 服务器 and 数据库 no text uses alone."""
    assert "务器" in subwords("服务器")
    assert "据库" in subwords("数据库")
    page = term_counts("", "代理服务器和数据库服务器；数据很多")
    counts = with_subwords(page, page.counts.keys()).counts
    assert counts["服务器"] == 2
    assert counts["数据"] == 2  # a word of its own here, and inside 数据库
    assert not {"务器", "据库", "服务"} & counts.keys()


def test_terms_are_written_as_the_samples_spell_them():
    pages = [
        term_counts("Cookies", "HTTP cookies: a cookie jar, two caches and one cache"),
        term_counts("", "The cache holds cookies"),
    ]
    ranked = [("cooki", 3.0), ("cach", 2.0), ("http", 1.0), ("足球", 0.5)]
    assert spell(ranked, pages) == [("cookies", 3.0), ("cache", 2.0), ("http", 1.0), ("足球", 0.5)]


def test_chinese_terms_are_written_in_the_characters_most_samples_use():
    """A term, and a sub-word of a compound, in the samples' Traditional characters where
    most samples write it so, in Simplified ones where most do; Taiwan's 記憶體, which is
    read as 内存, is written as it is read."""
    taiwanese = [term_counts("足球比賽", "聯賽第十輪比賽"), term_counts("", "聯賽戰報，記憶體不足")]
    pages = [with_subwords(page, {"足球", "比赛"}) for page in taiwanese]
    ranked = [("联赛", 3.0), ("比赛", 2.0), ("足球", 1.0), ("内存", 0.5)]
    assert spell(ranked, pages) == [("聯賽", 3.0), ("比賽", 2.0), ("足球", 1.0), ("内存", 0.5)]
    mainland = [term_counts("", "联赛战报"), term_counts("", "联赛积分榜")]
    assert spell([("联赛", 3.0)], [*mainland, taiwanese[1]]) == [("联赛", 3.0)]
    matches = ("足球比赛", "足球比赛回顾", "足球比賽")
    compounds = [with_subwords(term_counts("", text), {"比赛"}) for text in matches]
    assert spell([("比赛", 1.0)], compounds) == [("比赛", 1.0)]  # as two of three write it


def test_a_word_that_reads_as_another_only_among_traditional_characters_is_written_as_read():
    """列印 in 選擇列印範圍 is read as 打印 (print), but 列印 alone, in characters both
    scripts share, stays 列印: written so, the keyword would meet no page."""
    page = term_counts("", "選擇列印範圍")
    assert ("打印", "打印") in page.spellings
    assert spell([("打印", 3.0), ("范围", 1.0)], [page]) == [("打印", 3.0), ("範圍", 1.0)]


def html_terms(data: bytes, url: str, content_type: str | None = None) -> PageTerms:
    """The terms ``scrapy keywords`` counts of a sample page."""
    return term_counts(*html_text(data, url, content_type))


def test_html_terms_decode_any_charset_and_skip_scripts():
    page = "<title>足球</title><body><p>球队赢了比赛</p><script>var x</script></body>"
    counts = html_terms(page.encode("gbk"), "http://127.0.0.1/a.html").counts
    assert counts["足球"] == 3.0
    assert counts["球队"] == 1.0
    assert "var" not in counts
    xml = '<?xml version="1.0" encoding="utf-8"?><html><body>league</body></html>'
    assert html_terms(xml.encode(), "http://127.0.0.1/b.html").counts == Counter(leagu=1.0)
    assert not html_terms(b"   ", "http://127.0.0.1/c.html")


def test_a_title_counts_as_a_title_only_when_a_broken_head_puts_it_in_the_body():
    """A PHP include saved with a byte order mark, or a statistics ``div`` in the head, ends
    the head before the title; browsers still show it in the tab, not in the page."""
    heads = [
        "\ufeff<title>足球</title>",
        '<div style="display:none"><script src="/tj.js"></script></div><title>足球</title>',
    ]
    for head in heads:
        page = f'<html><head><meta charset="utf-8">{head}</head><body><p>球队赢了比赛</p>'
        counts = html_terms(page.encode(), "http://127.0.0.1/a.html", "text/html").counts
        assert counts["足球"] == 3.0
        assert counts["球队"] == 1.0


def test_background_idf_rules_out_words_found_on_every_off_topic_page():
    samples = [Counter(football=2, home=1), Counter(football=1, league=1, home=1)]
    background = [Counter(home=1, recipe=2), Counter(home=1, stock=1)]
    ranked = rank_terms(samples, background_idf(background), top=10)
    assert [term for term, _ in ranked] == ["football", "league"]


def test_default_idf_uses_jiebas_table_for_chinese():
    idf = default_idf([Counter(football=1), Counter(football=1, league=1)])
    assert idf("的") < idf("足球") < idf("一个jieba不认识的词")
    assert idf("football") < idf("league")  # in every sample: more likely boilerplate


@pytest.mark.parametrize(
    ("ranked", "scaled"),
    [
        (
            [("足球", 0.42), ("比赛", 0.21), ("球迷", 0.001)],
            [("足球", 3.0), ("比赛", 1.5), ("球迷", 0.1)],
        ),
        ([], []),
    ],
)
def test_weights_are_scaled_to_a_readable_range(ranked, scaled):
    assert scale_weights(ranked) == scaled
