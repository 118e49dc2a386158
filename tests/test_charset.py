import codecs

import pytest
from hypothesis import given
from hypothesis import strategies as st

from topicspider.charset import SAMPLE_SIZE, decode, decode_text_file, detect_encoding

TEXT = "足球比赛。中国队今天以三比一战胜对手、球迷在体育场欢呼。"


def page(meta: str = "", text: str = TEXT) -> str:
    return (
        f"<!DOCTYPE html><html><head>{meta}<title>足球比赛</title></head>"
        f"<body><h1>足球新闻</h1><p>{text}</p></body></html>"
    )


GBK_META = '<meta http-equiv="Content-Type" content="text/html; charset=gb2312">'
UTF8_META = '<meta charset="utf-8">'


@pytest.mark.parametrize(
    ("html", "codec", "content_type", "expected"),
    [
        # Declared and true.
        (page(GBK_META), "gbk", None, "gb18030"),
        (page(UTF8_META), "utf-8", None, "utf-8"),
        (page(), "gbk", "text/html; charset=GBK", "gb18030"),
        (page(), "utf-8", "text/html; charset=utf-8", "utf-8"),
        # Undeclared.
        (page(), "gbk", None, "gb18030"),
        (page(), "utf-8", None, "utf-8"),
        (page(), "gb18030", "text/html", "gb18030"),
        # Declared and false.
        (page(), "gbk", "text/html; charset=utf-8", "gb18030"),
        (page(UTF8_META), "gbk", None, "gb18030"),
        (page(GBK_META), "utf-8", None, "utf-8"),
        (page(), "utf-8", "text/html; charset=gbk", "utf-8"),
        (page(GBK_META), "gbk", "text/html; charset=ISO-8859-1", "gb18030"),
        (page(UTF8_META), "gbk", "text/html; charset=utf-8", "gb18030"),
    ],
)
def test_chinese(html, codec, content_type, expected):
    assert decode(html.encode(codec), content_type) == (expected, html)
    assert "足球比赛" in decode(html.encode(codec), content_type)[1]


@pytest.mark.parametrize("label", ["gb2312", "GBK", "x-gbk", "cp936", "gb_2312-80", "GB18030"])
def test_gbk_labels_are_gb18030(label):
    body = page().encode("gbk")
    assert detect_encoding(body, f"text/html; charset={label}") == "gb18030"
    assert detect_encoding(page(f'<meta charset="{label}">').encode("gbk")) == "gb18030"


def test_gb18030_four_byte_characters():
    html = page(text="𠮷野家的足球")
    assert decode(html.encode("gb18030"), "text/html; charset=gbk") == ("gb18030", html)


@pytest.mark.parametrize(
    ("bom", "codec", "expected"),
    [
        (codecs.BOM_UTF8, "utf-8", "utf-8"),
        (codecs.BOM_UTF16_LE, "utf-16-le", "utf-16-le"),
        (codecs.BOM_UTF16_BE, "utf-16-be", "utf-16-be"),
    ],
)
def test_bom(bom, codec, expected):
    html = page()
    assert decode(bom + html.encode(codec)) == (expected, html)


def test_bom_beats_a_wrong_header():
    body = codecs.BOM_UTF8 + page().encode("utf-8")
    assert decode(body, "text/html; charset=gbk") == ("utf-8", page())


def test_english_cp1252():
    html = "<p>“Smart quotes” — a café, naïve résumé, €5.</p>"
    assert decode(html.encode("cp1252")) == ("cp1252", html)
    assert decode(html.encode("cp1252"), "text/html; charset=iso-8859-1") == ("cp1252", html)


@pytest.mark.parametrize(
    ("text", "codec"),
    [
        ("Müller für Straße, schöne Grüße aus München.", "cp1252"),
        ("<p>サッカーの試合は日本代表が勝ちました。</p>", "shift_jis"),
        ("<p>足球比賽。中國隊今天贏了。台灣新聞報導。</p>", "big5"),
    ],
)
def test_other_encodings_round_trip(text, codec):
    assert decode(text.encode(codec))[1] == text


def test_empty_and_ascii():
    assert decode(b"") == ("utf-8", "")
    assert decode(b"<p>hello</p>") == ("utf-8", "<p>hello</p>")


def test_multibyte_character_cut_by_the_sample():
    html = "a" + "足球" * SAMPLE_SIZE
    for content_type in (None, "text/html; charset=utf-8"):
        assert decode(html.encode("utf-8"), content_type) == ("utf-8", html)
    assert decode(html.encode("gbk")) == ("gb18030", html)


def test_a_stray_byte_does_not_discredit_a_declaration():
    body = page(text=TEXT * 20).encode("utf-8").replace(b"<h1>", b"<h1>\xff")
    encoding, text = decode(body, "text/html; charset=utf-8")
    assert encoding == "utf-8"
    assert text == page(text=TEXT * 20).replace("<h1>", "<h1>\ufffd")


def test_unknown_and_unsafe_labels_are_ignored():
    body = page().encode("utf-8")
    assert detect_encoding(body, "text/html; charset=no-such-thing") == "utf-8"
    assert detect_encoding(b"+ADw-script+AD4-", "text/html; charset=utf-7") == "utf-8"


@given(st.binary(max_size=2048), st.one_of(st.none(), st.text(max_size=60)))
def test_random_bytes_never_raise(body, content_type):
    encoding, text = decode(body, content_type)
    assert codecs.lookup(encoding).name == encoding
    assert isinstance(text, str)


@given(st.text().filter(lambda s: not s.startswith("\ufeff")))
def test_utf8_round_trips(text):
    assert decode(text.encode("utf-8")) == ("utf-8", text)


def test_a_text_file_is_read_as_utf8_or_gbk_and_nothing_else():
    assert decode_text_file("\ufeff足球 3".encode()) == "足球 3"
    assert decode_text_file("足球 3 # 体育".encode("gbk")) == "足球 3 # 体育"
    with pytest.raises(UnicodeDecodeError):
        decode_text_file("für 3, Müller 2".encode("latin-1"))


UTF8_PAGE = page().encode("utf-8")


@pytest.mark.parametrize("label", ["utf-16", "utf16", "UTF-16LE", "utf-16be", "utf-32"])
def test_a_meta_declaring_utf16_or_utf32_means_utf8(label):
    # The WHATWG HTML standard: a <meta> that could be read is not in UTF-16 or UTF-32.
    html = page(f'<meta http-equiv="Content-Type" content="text/html; charset={label}">')
    assert decode(html.encode("utf-8")) == ("utf-8", html)
    assert decode(html.encode("gbk")) == ("gb18030", html)


@pytest.mark.parametrize("label", ["utf-16", "utf-16le", "utf-16be", "utf-32", "utf-32le"])
def test_a_header_declaring_utf16_or_utf32_is_not_believed_of_ascii_based_bytes(label):
    content_type = f"text/html; charset={label}"
    assert decode(UTF8_PAGE, content_type) == ("utf-8", page())
    assert decode(b"<p>hello</p>", content_type) == ("utf-8", "<p>hello</p>")
    assert decode(page().encode("gbk"), content_type) == ("gb18030", page())


@pytest.mark.parametrize(
    "label",
    [
        *("hex", "base64", "rot13", "zlib", "bz2", "uu", "quopri"),
        *("idna", "punycode", "undefined", "unicode_escape", "raw_unicode_escape"),
    ],
)
def test_codecs_that_are_not_charsets_are_ignored(label):
    html = page(f'<meta charset="{label}">')
    assert decode(html.encode("utf-8")) == ("utf-8", html)
    assert decode(html.encode("utf-8"), f"text/html; charset={label}") == ("utf-8", html)
    assert decode(b"<p>\\u003cb\\u003e</p>", f"text/html; charset={label}") == (
        "utf-8",
        "<p>\\u003cb\\u003e</p>",
    )


TRADITIONAL = "足球比賽今天在臺北舉行，球迷們非常激動。中華隊以二比一戰勝對手，贏得了冠軍。"
BIG5_META = '<meta http-equiv="Content-Type" content="text/html; charset=big5">'
LATIN1_HEADER = "text/html; charset=ISO-8859-1"


def tw_page(meta: str = "") -> str:
    return (
        f"<!DOCTYPE html><html><head>{meta}<title>足球比賽</title></head>"
        f"<body><h1>體育新聞</h1><p>{TRADITIONAL}</p></body></html>"
    )


@pytest.mark.parametrize("meta", [BIG5_META, ""])
@pytest.mark.parametrize("content_type", [LATIN1_HEADER, "text/html; charset=windows-1252"])
def test_big5_is_not_the_latin1_of_a_server_default(meta, content_type):
    html = tw_page(meta)
    assert decode(html.encode("big5"), content_type) == ("big5hkscs", html)
    assert "臺北" in decode(html.encode("big5"), content_type)[1]


@pytest.mark.parametrize(
    ("html", "codec"),
    [
        (page(GBK_META), "gbk"),
        (page(), "gbk"),
        (tw_page(GBK_META), "gbk"),  # GBK has the Traditional characters too
        (tw_page(), "gbk"),
        (tw_page(UTF8_META), "utf-8"),
    ],
)
def test_gb_and_utf8_chinese_is_not_the_latin1_of_a_server_default(html, codec):
    expected = "utf-8" if codec == "utf-8" else "gb18030"
    assert decode(html.encode(codec), LATIN1_HEADER) == (expected, html)


@pytest.mark.parametrize(
    "text",
    [
        "Müller für Straße, schöne Grüße aus München. Fußball in Zürich.",
        "L'équipe de France a gagné le match au Stade de France à Paris.",
        "¿Qué tal? El fútbol en España: Martín, José y Bogotá.",
        "Ärger über Übung; Öl, Käse und Äpfel.",
    ],
)
def test_latin1_pages_stay_cp1252(text):
    html = f"<html><head><title>Sport</title></head><body><p>{text}</p></body></html>"
    assert decode(html.encode("latin-1"), LATIN1_HEADER) == ("cp1252", html)
    assert decode(html.encode("latin-1"))[1] == html


@pytest.mark.parametrize(
    "text",
    [
        "體育 2\n臺灣 1\n足球 3\n",
        "臺灣 1\n",
        "籃球 2\n# 體育新聞\n",
        "# 種子\nhttp://體育.example/\n",
        "NBA籃球 3\n",
    ],
)
def test_a_gbk_text_file_may_hold_traditional_characters(text):
    assert decode_text_file(text.encode("gbk")) == text


@pytest.mark.parametrize(
    "data",
    [
        "für 3, Müller 2".encode("latin-1"),
        "Fußball 3\n".encode("latin-1"),
        "Straße 1\nfútbol 2\n".encode("latin-1"),
        "Bjørn 2\n".encode("latin-1"),
        "體育 2\n臺灣 1\n籃球 3\n".encode("big5"),
        "足球比賽 3\n".encode("big5"),
        "サッカー 3\n".encode("shift_jis"),
        bytes(range(256)),
        bytes(range(255, -1, -1)) * 4,
    ],
)
def test_a_text_file_in_another_encoding_is_refused(data):
    with pytest.raises(UnicodeDecodeError):
        decode_text_file(data)


GB_DECLARATIONS = [
    (GBK_META, None),
    ('<meta charset="gbk">', None),
    ('<meta http-equiv="Content-Type" content="text/html; charset=gb18030">', None),
    ("", "text/html; charset=GBK"),
]


@pytest.mark.parametrize(("meta", "content_type"), GB_DECLARATIONS)
def test_big5_declared_gb_is_read_as_big5(meta, content_type):
    # Big5 decodes as GBK without an error, into nonsense: 足球比賽 into ì瞴ゑ辽.
    html = tw_page(meta)
    assert decode(html.encode("big5"), content_type) == ("big5hkscs", html)
    assert "臺北" in decode(html.encode("big5"), content_type)[1]


@pytest.mark.parametrize(("meta", "content_type"), GB_DECLARATIONS)
@pytest.mark.parametrize("make_page", [page, tw_page])
def test_gbk_declared_gb_stays_gbk(make_page, meta, content_type):
    html = make_page(meta)
    assert decode(html.encode("gbk"), content_type) == ("gb18030", html)


@pytest.mark.parametrize(
    "text",
    [
        # Their letters read as Big5 hanzi of the commonest kind.
        "汉语拼音：nǐ hǎo，xiè xie，zài jiàn，duì bu qǐ，méi guān xi，nǚ hái，wǒ ài nǐ。",
        "俄语学习：Здравствуйте, спасибо, до свидания. Москва — столица России.",
        "目录：① 足球 ② 篮球 ③ 排球 ④ 网球 ⑤ 乒乓球 Ⅰ Ⅱ Ⅲ Ⅳ",
        "注音符号：ㄅㄆㄇㄈ ㄉㄊㄋㄌ ㄍㄎㄏ ㄐㄑㄒ ㄓㄔㄕㄖ ㄗㄘㄙ。",
        "漢語拼音：nǐ hǎo，xiè xie，zài jiàn，duì bu qǐ。",
        "床前明月光，疑是地上霜。舉頭望明月，低頭思故鄉。",
    ],
)
def test_gbk_pages_with_letters_or_rare_characters_stay_gbk(text):
    html = page(GBK_META, text)
    assert decode(html.encode("gbk")) == ("gb18030", html)


@pytest.mark.parametrize("make_page", [page, tw_page])
def test_gbk_declared_big5_is_read_as_gbk(make_page):
    html = make_page(BIG5_META)
    assert decode(html.encode("gbk")) == ("gb18030", html)


def test_big5_declared_big5_stays_big5():
    html = tw_page(BIG5_META)
    assert decode(html.encode("big5")) == ("big5hkscs", html)


def ascii_first(size: int, meta: str = "", make_page=page) -> str:
    """A page whose first ``size`` bytes and more are ASCII: a long inline script."""
    return make_page(f"{meta}<script>var nav = '{'x' * size}';</script>")


@pytest.mark.parametrize("size", [SAMPLE_SIZE, 3 * SAMPLE_SIZE + 1])
@pytest.mark.parametrize(
    ("make_page", "codec", "expected"),
    [
        (page, "gbk", "gb18030"),
        (tw_page, "gbk", "gb18030"),
        (page, "gb18030", "gb18030"),
        (page, "utf-8", "utf-8"),
        (tw_page, "utf-8", "utf-8"),
        (tw_page, "big5", "big5hkscs"),
    ],
)
def test_chinese_after_64kb_of_ascii(size, make_page, codec, expected):
    html = ascii_first(size, make_page=make_page)
    assert html.encode(codec)[:SAMPLE_SIZE].isascii()
    assert decode(html.encode(codec)) == (expected, html)
    assert decode(html.encode(codec), "text/html") == (expected, html)


@pytest.mark.parametrize(
    ("meta", "codec", "expected"),
    [
        (UTF8_META, "gbk", "gb18030"),
        (UTF8_META, "utf-8", "utf-8"),
        (GBK_META, "gbk", "gb18030"),
        (GBK_META, "utf-8", "utf-8"),
    ],
)
def test_a_declaration_is_checked_against_chinese_after_64kb_of_ascii(meta, codec, expected):
    html = ascii_first(SAMPLE_SIZE, meta)
    assert decode(html.encode(codec)) == (expected, html)


@given(st.text(min_size=1).filter(lambda s: not s.isascii()))
def test_utf8_after_64kb_of_ascii_round_trips(text):
    html = "<script>" + " " * SAMPLE_SIZE + "</script>" + text
    assert decode(html.encode("utf-8")) == ("utf-8", html)
