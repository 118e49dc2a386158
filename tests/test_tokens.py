from topicspider.tokens import (
    IRREGULAR_PLURALS,
    add_terms,
    joined_terms,
    mentions,
    normalize_term,
    simplified,
    spelled_tokens,
    subwords,
    tokenize,
)


def test_tokenize_chinese_english_stopwords_and_punctuation():
    tokens = tokenize("昨晚的足球比赛：Players scored THREE goals in the match!")
    tokens += [w for t in tokens for w in subwords(t)]
    assert "足球" in tokens
    assert "比赛" in tokens
    assert "的" not in tokens
    assert "the" not in tokens
    assert {"player", "score", "three", "goal", "match"} <= set(tokens)
    assert all(token == token.lower() for token in tokens)
    assert not any(token in "：!" for token in tokens)


def test_english_words_meet_their_other_forms():
    pairs = [
        ("protocols", "protocol"),
        ("policies", "policy"),
        ("indexes", "index"),
        ("classes", "class"),
        ("matches", "match"),
        ("hashes", "hash"),
        ("caches", "cache"),
        ("databases", "database"),
        ("cookies", "cookie"),
        ("movies", "movie"),
        ("goalies", "goalie"),
        # Verbs: a keyword file names the thing, a page does it.
        ("tweaking tweaks tweaked", "tweak tweak tweak"),
        ("overriding overrides", "override override"),
        ("threading", "thread"),
        ("rewriting", "rewrite"),
        ("signed signing", "sign sign"),
        # Irregular plurals, from the package's word list.
        ("sparse matrices", "sparse matrix"),
        ("partial indices", "partial index"),
        ("url aliases", "url alias"),
        ("exit statuses", "exit status"),
        ("context menus", "context menu"),
        ("children processes", "child process"),
        ("plot axes", "plot axis"),
    ]
    for other, word in pairs:
        assert tokenize(other) == tokenize(word), (other, word)
    # Words in -s that are no plurals stay apart from their s-less neighbours.
    assert len(set(tokenize("status stat news new https http analysis focus"))) == 8
    # A stop word is one however it is spelled: "during" is no "dure", "only" no "onli".
    assert tokenize("during because only very above others") == []


def test_every_irregular_plural_folds_as_its_singular():
    for plural, singular in IRREGULAR_PLURALS.items():
        assert tokenize(plural) == tokenize(singular), plural


def test_mentions_is_found_in_every_text_that_has_a_form_of_an_english_keyword():
    """The pattern of a stem is in every word stemmed to it, also where the stem is no
    piece of the word: "query" is "queri", "possibility" "possibl", "tying" "tie"."""
    for word in ["query", "queries", "possibility", "possibly", "tying", "tied", "mice"]:
        (token,) = tokenize(word)
        pattern = mentions([token])
        assert pattern is not None
        assert pattern.search(word), word


def test_compound_words_contain_their_parts():
    assert set(subwords("足球比赛")) >= {"足球", "比赛"}
    assert subwords("足球") == ()


def test_a_short_latin_word_written_against_chinese_is_read_with_it():
    """jieba's dictionary has words with Latin letters (A股, T恤, IP地址): before, the
    letters were cut off as a word of their own, and ``A股`` was the token ``股``."""
    assert tokenize("今日A股行情，T恤促销，设置IP地址") == [
        "今日",
        "a股",
        "行情",
        "t恤",
        "促销",
        "设置",
        "ip地址",
    ]
    assert tokenize("ａ股") == tokenize("A股")
    assert tokenize("用Python编写，用API调用") == ["用", "python", "编写", "用", "api", "调用"]
    assert set(subwords("ip地址")) == {"ip", "地址"}


def test_a_dictionary_word_never_takes_the_end_of_a_longer_latin_word():
    """jieba's dictionary has IP电话 and D版: before, 配置SIP电话 was ``ip电话``, and a
    page about SIP phones scored 0 for the keyword ``sip``."""
    assert tokenize("配置SIP电话") == ["配置", "sip", "电话"]
    assert tokenize("VoIP电话") == ["voip", "电话"]
    assert tokenize("微信iPad版")[-2:] == ["ipad", "版"]
    assert tokenize("IP电话") == ["ip电话"]


def test_only_a_word_with_chinese_in_it_counts_its_latin_part():
    """Before, ``données`` counted ``donn`` and ``es``, and ``testé`` counted ``test``."""
    assert subwords("données") == subwords("testé") == ()


def test_a_keyword_with_a_latin_letter_keeps_it():
    """Before, the keyword ``C罗`` was the term ``罗``, which every page naming 罗 matched."""
    assert normalize_term("C罗") == "c罗"
    assert tokenize("C罗梅开二度") == ["c罗", "梅开二度"]
    assert normalize_term("维生素C") in tokenize("富含维生素C的水果")


def test_a_letter_or_a_number_joined_to_a_word_is_kept():
    """Before, ``B-tree`` was read as ``tree``, ``SHA-1`` as ``sha``: the keyword ``b-tree``
    matched every tree. Alone, or joined to a letter or a number only, they still go."""
    assert tokenize("B-tree indexes") == ["b", "tree", "index"]
    assert tokenize("D-Bus, SHA-1 and UTF-8 on x86-64") == [
        *("d", "bus", "sha", "1", "utf", "8", "x86", "64")
    ]
    assert tokenize("SHA-256算法的实现") == ["sha", "256", "算法", "实现"]
    assert tokenize("a tree, version 2, on 2026-11-29, a-b testing") == ["tree", "version", "test"]
    assert list(spelled_tokens("B-Trees")) == [("b", "b"), ("tree", "trees")]


def test_a_joined_letter_is_read_the_same_in_every_setting():
    """Written against Chinese, in camelCase, with an underscore or another hyphen, it is
    still the phrase: before the review, 使用B-tree索引 was 使用b|tree|索引 (jieba dropped the
    ``b``), ``OpenSSL-3`` ended ``ssl 3``, and ``An-225`` left the bare ``225`` of a stop
    word."""
    assert tokenize("使用B-tree索引") == ["使用", "b", "tree", "索引"]
    assert tokenize("计算SHA-1值") == ["计算", "sha", "1", "值"]
    assert tokenize("OpenSSL-3")[:2] == ["openssl", "3"]
    assert tokenize("x86_64, Ｂ－ｔｒｅｅ, b\u2010tree") == ["x86", "64", "b", "tree", "b", "tree"]
    assert tokenize("An-225, IS-95, the-1") == []
    assert tokenize("OpenSSL\u20103") == tokenize("OpenSSL-3")
    # A camelCase word's words follow the words joined to it, each once.
    assert tokenize("JavaScript-based PyObject_New") == [
        *("javascript", "base", "java", "script", "pyobject", "new", "py", "object")
    ]
    assert list(joined_terms("使用B-tree索引和OpenSSL-3")) == [
        ("b tree", "b-tree"),
        ("openssl 3", "openssl-3"),
    ]


def test_a_language_named_by_a_letter_and_a_sign_is_a_word():
    """Before, C++ and C# lost their letter with their sign: the keyword ``C++`` matched
    nothing, and ``C++ templates`` every page's templates."""
    assert tokenize("C++ templates, C# and F#") == ["c++", "templat", "c#", "f#"]
    assert tokenize("学习C++编程，C#入门") == ["学习", "c++", "编程", "c#", "入门"]
    assert tokenize("C++11, g++ -O2, abc++") == ["c++", "g++", "o2", "abc"]
    assert tokenize("使用C#开发，用F#写") == ["使用", "c#", "开发", "用", "f#", "写"]
    assert tokenize("我喜欢C#") == ["喜欢", "c#"]
    assert tokenize("学习C#和F#") == ["学习", "c#", "f#"]  # a language's # opens no hashtag
    # A hashtag on a Chinese page closes with #: its last letter is no language.
    assert "c#" not in tokenize("#补充维生素C#")
    assert "c#" not in tokenize("#学习C# 很好")
    pattern = mentions(["c++", "c#"])
    assert pattern.search("c++ primer")
    assert pattern.search("c# in depth")
    assert not pattern.search("a clean calm case")


def test_keyword_terms_are_never_split():
    term = normalize_term("曼城德比")
    assert term == "曼城德比"
    assert term in tokenize("周末的曼城德比很精彩")


def test_a_term_learned_later_is_not_split_in_text_seen_before():
    text = "测量量子纠缠态很难"
    assert "纠缠态" not in tokenize(text)
    add_terms(["纠缠态"])
    assert "纠缠态" in tokenize(text)


def test_mentions_is_found_in_every_text_that_has_one_of_the_tokens():
    words = ["policy", "protocol", "index", "cach", "matrix", "足球", "world", "cup"]
    pattern = mentions(words)
    texts = [
        "Security Policies of the site",  # policies -> policy
        "HTTP PROTOCOLS explained",  # protocols -> protocol
        "Partial Indexes and Caches",  # indexes -> index, caches -> cach
        "Sparse Matrices",  # matrices -> matrix
        "周末的足球比赛",  # inside a compound
        "the World Cup final",
        "今天的菜谱：红烧肉的做法",
        "a quiet afternoon by the river",
    ]
    for text in texts:
        has_token = any(
            token in words or any(word in token for word in words if not word.isascii())
            for token in tokenize(text)
        )
        if has_token:
            assert pattern.search(text.lower()), text
    assert not pattern.search("今天的菜谱：红烧肉的做法")
    assert not pattern.search("a quiet afternoon by the river")


def test_mentions_looks_for_the_word_a_letter_or_a_number_is_joined_to():
    """``b`` and ``1`` are kept only in ``b-tree`` and ``sha-1``: looking for them would
    find nearly every text, and tokenize them all."""
    pattern = mentions(["b", "tree", "sha", "1"])
    assert pattern.search("b-tree")
    assert pattern.search("sha-1")
    assert not pattern.search("a bold 1st line")


def test_normalize_term_multiword():
    assert normalize_term("  World   Cups ") == "world cup"
    assert normalize_term("non-blocking") == "non block"


def test_traditional_chinese_is_read_as_simplified():
    """Pages and keywords in either script meet: each run of Chinese characters is read in
    Simplified ones before it is cut, and jieba's dictionary cuts both alike."""
    assert tokenize("聯賽第十輪比賽回顧：主隊球員連進兩球") == tokenize(
        "联赛第十轮比赛回顾：主队球员连进两球"
    )
    assert normalize_term("足球比賽") == normalize_term("足球比赛")
    assert simplified("Football 足球比賽") == "Football 足球比赛"


def test_taiwan_words_in_traditional_text_are_read_as_mainland_ones():
    """A run with Traditional characters is read with Taiwan's words in mainland ones (網路,
    network, as 网络; 列印, print, as 打印); a run in Simplified characters is left as it is
    written (程序 is a program on the mainland, a process in Taiwan)."""
    assert tokenize("設定網路服務") == tokenize("设置网络服务")
    assert simplified("選擇列印範圍") == "选择打印范围"
    assert simplified("关于数字签名") == "关于数字签名"
    assert simplified("运行程序") == "运行程序"


def test_full_width_letters_and_digits_are_the_ascii_words():
    """GB2312-era pages write Latin words full-width: before, ``ｆｉｆａ`` was a token of
    its own, and a page about the ＦＩＦＡ scored 0 for the keyword ``fifa``."""
    assert tokenize("ＦＩＦＡ世界杯，ＮＢＡ总决赛 Ｗｏｒｌｄ Ｃｕｐ") == tokenize(
        "FIFA世界杯，NBA总决赛 World Cup"
    )
    assert tokenize("ＦＩＦＡ") == ["fifa"]


def test_a_camel_case_name_is_read_with_its_words():
    """An API reference names its classes so (review of a site not seen before: the JDK's
    ``BlockingQueue`` never met the keyword ``blocking queue``, nor ``DatagramSocket``
    ``socket``). The name stays a token, so that a keyword file that writes it whole
    (``postgresql``) still meets it; an acronym's plural is no camelCase."""
    assert tokenize("BlockingQueue URLConnection") == [
        *("blockingqueu", "block", "queue"),
        *("urlconnect", "url", "connect"),
    ]
    assert "postgresql" in tokenize("PostgreSQL")
    assert tokenize("URLs APIs HTTP socket") == ["url", "api", "http", "socket"]
    assert normalize_term("blocking queue") in " ".join(tokenize("a BlockingQueue of tasks"))
    # A number with thousands of joins is read once, whole: each join walked back over
    # the word before, and 40,000 characters of one took 31 s.
    assert tokenize("0x" + "aB" * 20_000 + " VoIP电话") == ["0x" + "ab" * 20_000, "voip", "电话"]
