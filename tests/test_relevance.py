import math

import pytest

from topicspider.keywords import parse_inline
from topicspider.relevance import (
    STRATEGIES,
    BestFirst,
    BreadthFirst,
    DepthFirst,
    LinkCandidate,
    Relevance,
    link_text,
    reserve_score,
)
from topicspider.text import LinkContext, parse_html
from topicspider.tokens import tokenize

SPORTS = parse_inline("足球:3,比赛:2,球员:1,world cup:2")


def test_cosine_of_text_equal_to_keywords_is_one():
    relevance = Relevance(parse_inline("足球:1,比赛:1"))
    assert relevance.text("足球 比赛") == pytest.approx(1.0)


def test_cosine_matches_hand_computed_value():
    relevance = Relevance(parse_inline("足球:3,比赛:1"))
    # tf: 足球 2 -> 1 + ln 2, 天气 1 -> 1; keyword vector (3, 1).
    tf = 1 + math.log(2)
    expected = (3 * tf) / (math.sqrt(tf**2 + 1) * math.sqrt(10))
    assert relevance.text("足球 足球 天气") == pytest.approx(expected)


def test_off_topic_text_scores_zero_and_on_topic_scores_higher():
    relevance = Relevance(SPORTS)
    assert relevance.text("今天的菜谱：红烧肉的做法") == 0.0
    on = relevance.page("世界杯足球比赛", "球员在比赛中打进两球，足球迷欢呼。")
    off = relevance.page("股票行情", "今天股市上涨，投资者关注理财产品。")
    assert on > 0.3
    assert off == 0.0


#: Made-up two-character terms, enough to make a glossary of a keyword vector.
GLOSSARY = ",".join(f"{chr(0x9F00 + i // 40)}{chr(0x9E00 + i % 40)}:1" for i in range(400))


def test_a_glossary_scores_as_the_formula_says():
    """Beyond ``MENTIONS_MAX`` words, texts are tokenized without the keyword check, and
    the cosine walks the text's words rather than the thousands of terms."""
    relevance = Relevance(parse_inline(f"足球:3,{GLOSSARY}"))
    assert relevance.mentions is None
    tf = 1 + math.log(2)
    expected = (3 * tf) / (math.sqrt(tf**2 + 1) * math.sqrt(9 + 400))
    assert relevance.text("足球 足球 天气") == pytest.approx(expected)
    assert relevance.text("今天的菜谱：红烧肉的做法") == 0.0


@pytest.mark.parametrize("glossary", ["", GLOSSARY], ids=["keywords", "glossary"])
def test_link_texts_score_the_same_with_or_without_the_keyword_check(site, glossary):
    """Texts that name no keyword skip tokenizing: every text of the fixture site's
    pages (Chinese, GBK among them, and English) scores as the full computation does."""
    terms = "足球:3,比赛:2,球员:1,world cup:2,policy:1,goal:1"
    relevance = Relevance(parse_inline(f"{terms},{glossary}" if glossary else terms))
    unchecked = Relevance(parse_inline(f"{terms},{glossary}" if glossary else terms))
    unchecked.mentions = None
    texts = {"Security policies", "GOALS of the season", "足球比赛", "菜谱"}
    for path in site.root.rglob("*.html"):
        root = parse_html(path.read_bytes())
        texts.update(" ".join(element.itertext()) for element in root.iter("a", "p", "li"))
    scores = [(relevance.text(text), unchecked.text(text)) for text in texts]
    assert sum(1 for fast, _ in scores if fast == 0) > 10
    assert sum(1 for fast, _ in scores if fast > 0) > 10
    for fast, full in scores:
        assert fast == pytest.approx(full)


def test_full_width_link_texts_score_as_their_ascii_form():
    """GB2312-era pages write Latin words in full-width letters: before, the keyword check
    did not read them so, and a link reading ＮＢＡ常规赛 scored 0 for ``nba``, where the
    same text as a page scored as NBA常规赛 does."""
    relevance = Relevance(parse_inline("nba:3,季后赛:2,utf-8:1"))
    assert relevance.text("ＮＢＡ常规赛") == relevance.text("NBA常规赛") > 0
    assert relevance.text("ＵＴＦ－８编码") == relevance.text("UTF-8编码") > 0
    assert relevance.text("ＮＢＡ常规赛") == relevance.page("", "ＮＢＡ常规赛")


def test_taiwan_words_beside_a_latin_word_are_found_by_the_keyword_check():
    """設定IP位址 is cut as one run, 设置 and ip地址; the check read 位址 by itself, as
    位址, and scored the link 0 where its tokens score 0.35."""
    relevance = Relevance(parse_inline("IP地址:1,打印:1"))
    for text in ("設定IP位址", "列印PDF檔案"):
        unchecked = Relevance(parse_inline("IP地址:1,打印:1"))
        unchecked.mentions = None
        assert relevance.text(text) == unchecked.text(text) > 0


def test_traditional_link_texts_score_the_same_with_or_without_the_keyword_check():
    """The keyword check reads Traditional text as the tokenizer does, one run of Chinese
    characters at a time: 程序 beside 設定 is still 程序, not Taiwan's word for a process."""
    relevance = Relevance(parse_inline("程序:2,打印:2,足球:1,比赛:1"))
    unchecked = Relevance(parse_inline("程序:2,打印:2,足球:1,比赛:1"))
    unchecked.mentions = None
    texts = ["程序 設定", "列印 設定", "選擇列印範圍", "足球比賽回顧", "運行程序", "菜譜"]
    scores = [(relevance.text(text), unchecked.text(text)) for text in texts]
    assert [fast > 0 for fast, _ in scores] == [True, False, True, True, True, False]
    for fast, full in scores:
        assert fast == pytest.approx(full)


SIGNATURES = "数字签名:3,签名:3,证书:2,signature:1.5,certificate:1"
#: An untranslated page of a Chinese help: English, with the site's Chinese menu words.
UNTRANSLATED = (
    "帮助 目录 Time Stamp Authorities (TSA) issue digitally signed timestamps that are used"
    " during signed PDF export. Adding a trusted timestamp to an electronic signature provides"
    " a digital seal of data integrity and a trusted date and time of when the transaction took"
    " place. Recipients can verify when the document was signed, and check the certificate of"
    " the time stamp authority. Choose Tools - Options - LibreOffice - Security - TSAs."
)


def test_a_page_in_english_is_measured_against_the_english_terms_of_a_mixed_keyword_file():
    """A page not written in Chinese can only meet the English terms of a keyword file in
    Chinese and English: measured against those alone, it scores as it would with an
    English keyword file, where the Chinese terms it cannot contain pulled it under the
    threshold."""
    mixed = Relevance(parse_inline(SIGNATURES))
    english = Relevance(parse_inline("signature:1.5,certificate:1"))
    title = "Time Stamp Authorities for Digital Signatures"
    score = mixed.page(title, UNTRANSLATED)
    assert score == pytest.approx(english.page(title, UNTRANSLATED))
    assert score > 0.12 > mixed.page("时间戳机构", UNTRANSLATED)
    assert mixed.page(title, "") == pytest.approx(english.page(title, ""))  # a title alone


def test_a_page_in_chinese_is_measured_against_the_whole_keyword_vector():
    """A Chinese title, or a body whose words are a tenth Chinese or more, makes a page
    Chinese, however much English code it quotes: its English words still meet the
    English terms, and the Chinese terms count against it as usual."""
    mixed = Relevance(parse_inline(SIGNATURES))
    english = Relevance(parse_inline("signature:1.5,certificate:1"))
    code = "Dim signature As Object signature = GetCertificate() " * 3
    for title, body in [
        ("签名 对象", code),
        ("Signature", code + "用证书给文档签名，验证签名是否有效。"),
    ]:
        assert 0 < mixed.page(title, body) < english.page(title, body)


@pytest.mark.parametrize(("chinese_words", "in_chinese"), [(2, False), (3, True)])
def test_a_tenth_of_the_words_in_chinese_make_a_page_chinese(chinese_words, in_chinese):
    """27 English words and 2 Chinese ones are under a tenth; 3 are a tenth."""
    mixed = Relevance(parse_inline(SIGNATURES))
    english = Relevance(parse_inline("signature:1.5,certificate:1"))
    body = "signature certificate " + " ".join(f"word{n}" for n in range(25))
    body += " 菜谱 美食 烹饪"[: 3 * chinese_words]
    assert len(tokenize(body)) == 27 + chinese_words
    as_english = mixed.page("Signatures", body) == pytest.approx(english.page("Signatures", body))
    assert as_english is not in_chinese


def test_phrase_terms_count_only_as_phrases():
    relevance = Relevance(parse_inline("world cup:1"))
    assert relevance.text("the world cup final") > 0
    assert relevance.text("a cup of tea for the world") == 0.0


def test_a_singular_keyword_matches_its_plural():
    relevance = Relevance(parse_inline("index:3,partial index:1"))
    assert relevance.text("11. Indexes") == relevance.text("11. Index") > 0
    assert relevance.text("Partial Indexes") == relevance.text("partial index")


def test_keyword_inside_chinese_compound_counts():
    relevance = Relevance(parse_inline("足球:1"))
    assert relevance.text("足球比赛") > 0


def test_a_keyword_with_a_latin_letter_matches_only_its_own_word():
    relevance = Relevance(parse_inline("C罗:1"))
    assert relevance.text("C罗在皇马的最后一个赛季") > 0
    assert relevance.text("小罗和大罗都踢球，姓罗的老师教数学") == 0.0


def test_a_term_with_a_letter_or_a_number_matches_only_its_own_word():
    """Before, ``b-tree`` was the term ``tree`` and ``sha-1`` the term ``sha``."""
    relevance = Relevance(parse_inline("b-tree:2,sha-1:1"))
    assert relevance.text("B-Tree indexes") > 0
    assert relevance.text("SHA-1 digests") > 0
    assert relevance.text("the tree view and its tree model") == 0.0
    assert relevance.text("SHA-256 digests") == 0.0
    assert relevance.text("使用B-tree索引") > 0
    assert relevance.text("计算SHA-1值") > 0
    languages = Relevance(parse_inline("C++ templates:2,C#:1"))
    assert languages.text("C++ templates explained") > 0
    assert languages.text("学习C++ templates") > 0
    assert languages.text("Jinja templates") == 0.0
    assert languages.text("C#编程入门") > 0
    assert languages.text("使用C#开发") > 0  # before, 0: read as a hashtag's end
    assert languages.text("#学习C#") == 0.0


def test_title_weighs_more_than_body():
    relevance = Relevance(SPORTS, title_weight=3.0)
    in_title = relevance.page("足球", "天气 晴朗 温度 适中 风力 微弱")
    in_body = relevance.page("天气", "足球 晴朗 温度 适中 风力 微弱")
    assert in_title > in_body


@pytest.mark.parametrize("weight", [0.0, 0.3, 1.0])
def test_a_title_weighted_less_than_the_body_adds_less_and_never_takes_away(weight):
    """A count under 1 (a title word times a weight under 1) is a term frequency too, not
    a logarithm gone negative, nor, at 0, a score that is not a number."""
    relevance = Relevance(parse_inline("football:1,match:1"), title_weight=weight)
    body_only = relevance.page("", "football report")
    with_title = relevance.page("match", "football report")
    assert 0 < body_only <= with_title <= 1
    assert (with_title == body_only) == (weight == 0)
    if weight:
        more = Relevance(parse_inline("football:1,match:1"), title_weight=weight + 1)
        assert more.page("match", "football report") > with_title
    assert relevance.page("news", "football report") <= body_only


def test_tfidf_discounts_words_every_page_has():
    relevance = Relevance(parse_inline("足球:1,比赛:1"), weighting="tfidf")
    for _ in range(5):
        relevance.page("比赛", "比赛 新闻 今天")
    assert relevance.page("足球", "足球 新闻") > relevance.page("比赛", "比赛 新闻")


def test_unknown_weighting_is_rejected():
    with pytest.raises(ValueError, match="weighting"):
        Relevance(SPORTS, weighting="bm25")


def candidate(
    anchor: str, depth: int = 1, parent: float = 0.0, url: str = "http://127.0.0.1/x.html"
):
    """A link as the analyzer scores it: its anchor, context and URL words against SPORTS."""
    text = link_text(LinkContext(url, anchor, anchor))
    return LinkCandidate(Relevance(SPORTS).text(text), depth, parent)


def test_best_first_prefers_topical_anchor_and_topical_parent():
    strategy = BestFirst({"anchor": 0.6, "parent": 0.4})
    topical = strategy.score(candidate("足球比赛回顾"))
    plain = strategy.score(candidate("联系我们"))
    assert topical > plain
    assert strategy.score(candidate("联系我们", parent=0.5)) > plain
    assert strategy.score(candidate("x", url="http://127.0.0.1/足球/index.html")) > plain


def test_breadth_and_depth_first_order_by_depth():
    assert BreadthFirst().score(candidate("", depth=1)) > BreadthFirst().score(
        candidate("", depth=2)
    )
    assert DepthFirst().score(candidate("", depth=2)) > DepthFirst().score(candidate("", depth=1))
    assert set(STRATEGIES) == {"best_first", "bfs", "dfs"}


def test_links_in_reserve_go_after_every_scored_link_fewest_clicks_first():
    strategy = BestFirst({"anchor": 0.6, "parent": 0.4})
    worst = min(
        scorer.score(candidate("联系我们", depth=40))
        for scorer in (strategy, BreadthFirst(), DepthFirst())
    )
    near_good, near_poor, far_good = (
        reserve_score(strategy.score(candidate(anchor, parent=parent)), depth)
        for anchor, parent, depth in (("联系我们", 0.5, 3), ("联系我们", 0.0, 3), ("足球", 1.0, 4))
    )
    assert worst > near_good > near_poor > far_good
    assert reserve_score(BreadthFirst().score(candidate("", depth=3)), 3) > far_good


def test_weights_are_checked():
    with pytest.raises(ValueError, match="unknown link-score terms: colour"):
        BestFirst({"colour": 1.0})
    with pytest.raises(ValueError, match=">= 0"):
        BestFirst({"anchor": -1.0})


def test_pattern_yield_and_importance_terms():
    strategy = BestFirst({"anchor": 0, "parent": 0, "pattern": 1, "importance": 2})
    assert strategy.score(LinkCandidate(0.0, 1, 0.0, pattern_yield=0.5, importance=0.25)) == 1.0
    features = strategy.features(LinkCandidate(0.1, 1, 0.3, pattern_yield=0.5, importance=0.25))
    assert features == (0.1, 0.3, 0.5, 0.25)


def test_adaptive_weights_follow_the_term_that_predicts_relevance():
    strategy = BestFirst({"anchor": 0.5, "parent": 0.5}, adaptive=True, warmup=5)
    for i in range(200):
        anchor, parent = (i % 7) / 7, ((i * 3) % 5) / 5
        strategy.learn((anchor, parent, 0.0, 0.0), relevance=anchor * 0.8)
    weights = strategy.weights_by_name()
    assert weights["anchor"] > 0.9
    assert weights["parent"] < 0.1
    assert weights["pattern"] == weights["importance"] == 0.0


def test_a_resumed_mix_keeps_what_it_learned_under_the_weights_given_now():
    saved = BestFirst({"anchor": 0.5, "parent": 0.5}, adaptive=True, warmup=5)
    for i in range(200):
        anchor, parent = (i % 7) / 7, ((i * 3) % 5) / 5
        saved.learn((anchor, parent, 0.0, 0.0), relevance=anchor * 0.8)
    resumed = BestFirst({"anchor": 0.5, "parent": 0.5}, adaptive=True, warmup=5)
    resumed.resume(saved)
    assert resumed.weights_by_name() == saved.weights_by_name()
    reweighed = BestFirst({"anchor": 0.2, "parent": 0.2}, adaptive=True, warmup=5)
    reweighed.resume(saved)
    assert sum(reweighed.weights_by_name().values()) == pytest.approx(0.4, abs=1e-3)
    fixed = BestFirst({"anchor": 0.3, "parent": 0.7}, adaptive=False)
    fixed.resume(saved)
    assert fixed.weights_by_name()["anchor"] == 0.3


def test_fixed_weights_do_not_learn():
    strategy = BestFirst({"anchor": 0.5, "parent": 0.5}, adaptive=False)
    strategy.learn((1.0, 0.0, 0.0, 0.0), 1.0)
    assert strategy.weights_by_name()["anchor"] == 0.5


def test_navigation_links_are_discounted():
    strategy = BestFirst({"anchor": 0.6, "parent": 0.4}, noise_discount=0.5)
    content = LinkCandidate(0.5, 1, 0.2)
    menu = LinkCandidate(0.5, 1, 0.2, navigation=True)
    assert strategy.score(menu) == pytest.approx(strategy.score(content) * 0.5)


def test_pages_of_equal_relevance_teach_no_mix():
    strategy = BestFirst({"anchor": 0.6, "parent": 0.4}, adaptive=True, warmup=5)
    for i in range(30):
        strategy.learn((0.1 * (i % 5), 0.01 * i, 0.0, 0.0), 0.4)
    assert strategy.weights_by_name() == {
        "anchor": 0.6,
        "parent": 0.4,
        "pattern": 0,
        "importance": 0,
    }
