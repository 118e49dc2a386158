import codecs

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from w3lib.encoding import html_body_declared_encoding

from topicspider.charset import (
    SAMPLE_SIZE,
    decode,
    decode_text_file,
    detect_encoding,
    gbk_reading,
    readable,
)

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
    body = text.encode("utf-8")
    assume(html_body_declared_encoding(body) is None)  # a declaration is believed: below
    assert decode(body) == ("utf-8", text)


def test_ascii_that_declares_gbk_is_read_as_declared():
    """A case Hypothesis found: the declaration is believed, as browsers do, and the text
    is the same either way."""
    assert decode(b"<META CHARSET=GBK") == ("gb18030", "<META CHARSET=GBK")


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


def test_a_gbk_text_file_may_hold_rare_hanzi_among_everyday_ones():
    text = "化学元素 3\n铍 2\n氚 1\n"
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
        # One word or two of Cyrillic, Greek or Hebrew read as GB2312's rare hanzi (趔蜥铍).
        "футбол 3\n".encode("cp1251"),
        "футбол 3\n".encode("iso-8859-5"),
        "ποδόσφαιρο 3\nαγώνας 2\n".encode("cp1253"),
        "כדורגל 3\nמשחק 2\n".encode("cp1255"),
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


KOREAN = "서울은 대한민국의 수도이며 가장 큰 도시이다. 오늘 축구 경기에서 한국 팀이 이겼다."
KOREAN_HANJA = "大韓民國의 首都는 서울이다. 今日 蹴球 競技에서 韓國 팀이 이겼다."
JAPANESE = "東京は日本の首都であり、最大の都市です。今日のサッカーの試合で日本代表が勝ちました。"
KOREAN_AND_JAPANESE = ["euc-kr", "ks_c_5601-1987", "shift_jis", "windows-31j", "euc-jp"]


@pytest.mark.parametrize("label", KOREAN_AND_JAPANESE)
@pytest.mark.parametrize(
    ("make_page", "codec", "expected"), [(page, "gbk", "gb18030"), (tw_page, "big5", "big5hkscs")]
)
def test_chinese_declared_korean_or_japanese_is_read_as_chinese(label, make_page, codec, expected):
    """A template's declaration left on a Chinese site: GBK read as EUC-KR is Hangul and
    Hanja, as Shift_JIS half-width katakana, mostly without an error."""
    html = make_page(f'<meta charset="{label}">')
    assert decode(html.encode(codec)) == (expected, html)
    assert decode(make_page().encode(codec), f"text/html; charset={label}")[0] == expected


@pytest.mark.parametrize(
    ("text", "codec", "label", "expected"),
    [
        (KOREAN, "euc-kr", "euc-kr", "cp949"),
        (KOREAN_HANJA, "euc-kr", "euc-kr", "cp949"),
        (JAPANESE, "shift_jis", "shift_jis", "cp932"),
        (JAPANESE, "euc-jp", "euc-jp", "euc_jp"),
    ],
)
def test_korean_and_japanese_declared_so_stay_so(text, codec, label, expected):
    """Read as GBK they are common hanzi too, but few of the most frequent."""
    html = f'<html><head><meta charset="{label}"><title>{text[:4]}</title></head><p>{text}</p>'
    assert decode(html.encode(codec)) == (expected, html)


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


def long_page(make_page, meta: str = "") -> str:
    """A page of thousands of Chinese characters."""
    html = make_page(meta)
    return html.replace(TRADITIONAL, TRADITIONAL * 50).replace(TEXT, TEXT * 50)


def stray_byte(html: str, codec: str) -> tuple[bytes, str]:
    """A corrupt byte in a comment, and the text a reader should see."""
    body = html.encode(codec).replace(b"<body>", b"<body><!-- \xff -->")
    return body, html.replace("<body>", "<body><!-- \ufffd -->")


def cut_off(html: str, codec: str) -> tuple[bytes, str]:
    """A page cut off in the middle of its last character, and the text a reader should see."""
    end = html.rindex("</p>")
    return html[:end].encode(codec)[:-1], html[: end - 1] + "\ufffd"


@pytest.mark.parametrize("spoil", [stray_byte, cut_off])
@pytest.mark.parametrize("content_type", [None, LATIN1_HEADER])
@pytest.mark.parametrize(
    ("make_page", "meta", "codec", "expected"),
    [
        (tw_page, "", "big5", "big5hkscs"),
        (tw_page, BIG5_META, "big5", "big5hkscs"),
        (tw_page, GBK_META, "big5", "big5hkscs"),
        (page, "", "gbk", "gb18030"),
        (page, GBK_META, "gbk", "gb18030"),
        (page, "", "utf-8", "utf-8"),
        (page, GBK_META, "utf-8", "utf-8"),
    ],
)
def test_one_bad_byte_does_not_outweigh_thousands_of_good_characters(
    make_page, meta, codec, expected, content_type, spoil
):
    body, text = spoil(long_page(make_page, meta), codec)
    assert decode(body, content_type) == (expected, text)


#: A sidebar of another site's headlines, in GBK.
GBK_SIDEBAR = "".join(f"<li><a href=/{n}>今日财经新闻标题第{n}条</a></li>" for n in range(8))


@pytest.mark.parametrize(
    ("meta", "content_type"),
    [(UTF8_META, "text/html; charset=utf-8"), (UTF8_META, None), ("", "text/html; charset=utf-8")],
)
def test_a_utf8_page_with_a_gbk_part_is_utf8(meta, content_type):
    # A UTF-8 article that includes a fragment left in GBK (a sidebar, a footer) server-side.
    html = page(meta, TEXT * 4)
    body = html.encode("utf-8").replace(b"</body>", GBK_SIDEBAR.encode("gbk") + b"</body>")
    encoding, text = decode(body, content_type)
    assert encoding == "utf-8"
    assert text.startswith(html[: html.index("</body>")])


@pytest.mark.parametrize("spoil", [stray_byte, cut_off])
@pytest.mark.parametrize(
    ("make_page", "codec", "expected"), [(page, "gbk", "gb18030"), (tw_page, "big5", "big5hkscs")]
)
def test_one_bad_byte_in_a_short_undeclared_page_is_forgiven(make_page, codec, expected, spoil):
    # A notice of two sentences: under a hundred non-ASCII bytes, where a guess forgave
    # no error, and the page was read as cp1252.
    body, text = spoil(make_page(), codec)
    assert sum(byte > 0x7F for byte in body) < 100
    assert decode(body) == (expected, text)


@pytest.mark.parametrize(
    ("text", "codec"),
    [
        ("Le député a présenté un rapport très détaillé à l'assemblée générale.", "cp1252"),
        ("Fußball ist schön, Grüße aus München!", "cp1252"),
        ("Привет, как дела у тебя сегодня?", "koi8-r"),
        ("Привет, как дела у тебя сегодня?", "cp1251"),
    ],
)
def test_a_short_page_of_another_encoding_is_not_taken_for_chinese(text, codec):
    assert detect_encoding(tiny_page("", text).encode(codec)) not in ("gb18030", "big5hkscs")


def test_koi8r_russian_is_not_taken_for_gbk():
    # Russian in KOI8-R reads as common hanzi in GBK, with an error after each odd-length word.
    html = "<p>Футбольный матч между сборными России и Германии.</p>" * 50
    assert decode(html.encode("koi8-r")) == ("koi8-r", html)


def tiny_page(meta: str, text: str) -> str:
    return f"<html><head>{meta}<title>{text}</title></head><body><p>{text}</p></body></html>"


@pytest.mark.parametrize(
    ("meta", "content_type", "text", "codec", "expected"),
    [
        # Their bytes are valid UTF-8 too: 学校 reads as ѧУ, 通知 as ֪ͨ, 議 as ĳ.
        ('<meta charset="gbk">', None, "学校", "gbk", "gb18030"),
        (GBK_META, None, "通知", "gbk", "gb18030"),
        ("", "text/html; charset=gb2312", "学校", "gbk", "gb18030"),
        ('<meta charset="windows-936">', None, "通知", "gbk", "gb18030"),
        # Browsers read a <meta> in the head after the first 1024 bytes too.
        (f"<style>{'p {}' * 500}</style>{GBK_META}", None, "学校", "gbk", "gb18030"),
        (BIG5_META, None, "議", "big5", "big5hkscs"),
        ("", "text/html; charset=x-x-big5", "議", "big5", "big5hkscs"),
    ],
)
def test_one_or_two_hanzi_that_are_valid_utf8_are_read_as_declared(
    meta, content_type, text, codec, expected
):
    html = tiny_page(meta, text)
    assert decode(html.encode(codec), content_type) == (expected, html)


@pytest.mark.parametrize(
    ("meta", "content_type", "text"),
    [
        ('<meta charset="gbk">', None, "足球"),
        ('<meta charset="gbk">', None, "“Smart” quotes"),
        ('<meta charset="gbk">', None, "Un café"),
        ("", "text/html; charset=gbk", "Müller"),
        ("", "text/html; charset=gbk", "© 2024 Example"),
        ("", "text/html; charset=gb2312", "½ price"),
        ("", "text/html; charset=gbk", "Москва"),
        # ѧУ alone would read as GBK 学校, but the page says UTF-8 too.
        (UTF8_META, "text/html; charset=gbk", "ѧУ"),
        ('<meta charset="unicode-1-1-utf-8">', "text/html; charset=gbk", "ѧУ"),
    ],
)
def test_utf8_declared_gb_stays_utf8(meta, content_type, text):
    html = tiny_page(meta, text)
    assert decode(html.encode("utf-8"), content_type) == ("utf-8", html)


@pytest.mark.parametrize(
    ("bom", "codec", "content_type"),
    [
        (codecs.BOM_UTF16_LE, "utf-16-le", LATIN1_HEADER),
        (codecs.BOM_UTF16_BE, "utf-16-be", LATIN1_HEADER),
        (codecs.BOM_UTF32_LE, "utf-32-le", "text/html; charset=utf-16"),
    ],
)
def test_a_byte_order_mark_beats_the_header(bom, codec, content_type):
    # Windows Notepad's "Unicode", served with the server's default charset.
    html = "<html><body><p>hello</p></body></html>"
    assert decode(bom + html.encode(codec), content_type) == (codec, html)


@pytest.mark.parametrize(
    "html",
    [
        "<p>Müller</p>",
        "<p>café</p>",
        "<p>© 2024</p>",
    ],
)
@pytest.mark.parametrize("content_type", [None, "text/html", "text/html; charset="])
def test_undeclared_latin1_is_cp1252(html, content_type):
    assert decode(html.encode("latin-1"), content_type) == ("cp1252", html)


WEB_LABELS = {
    # Labels of the WHATWG Encoding Standard that Python does not know, and windows-936.
    "gb18030": "csgb2312 gb_2312 x-gbk windows-936",
    "big5hkscs": "cn-big5 x-x-big5",
    "utf-16-le": "csunicode iso-10646-ucs-2 ucs-2 unicode unicodefeff",
    "utf-16-be": "unicodefffe",
    "euc_jp": "cseucpkdfmtjapanese x-euc-jp",
    "cp949": "cseuckr csksc56011987 iso-ir-149 ks_c_5601-1989 ksc_5601 windows-949",
    "cp1252": "iso88591 x-cp1252",
    "cp1250": "x-cp1250",
    "cp1251": "x-cp1251",
    "cp1253": "x-cp1253",
    "cp1254": "iso88599 x-cp1254",
    "cp1255": "x-cp1255",
    "cp1256": "x-cp1256",
    "cp1257": "x-cp1257",
    "cp1258": "x-cp1258",
    "cp874": "dos-874 iso885911",
    "iso8859-2": "iso88592",
    "iso8859-3": "iso88593",
    "iso8859-4": "iso88594",
    "iso8859-5": "iso88595",
    "iso8859-6": "csiso88596e csiso88596i iso-8859-6-e iso-8859-6-i iso88596",
    "iso8859-7": "iso88597 sun_eu_greek",
    "iso8859-8": "csiso88598e csiso88598i iso-8859-8-e iso-8859-8-i iso88598 logical visual",
    "iso8859-10": "iso885910",
    "iso8859-13": "iso885913",
    "iso8859-14": "iso885914",
    "iso8859-15": "csisolatin9 iso885915",
    "koi8-r": "koi koi8",
    "koi8-u": "koi8-ru",
    "mac-roman": "csmacintosh mac x-mac-roman",
    "mac-cyrillic": "x-mac-cyrillic x-mac-ukrainian",
}
LABELLED_TEXT = {
    "gb18030": ("学校", "gbk"),
    "big5hkscs": ("議", "big5"),
    "utf-16-le": ("hello", "utf-16-le"),
    "utf-16-be": ("hello", "utf-16-be"),
    "euc_jp": ("サッカーの試合は日本代表が勝ちました。", "euc_jp"),
    "cp949": ("축구 경기에서 한국 대표팀이 이겼습니다.", "cp949"),
}


@pytest.mark.parametrize(
    ("label", "codec"),
    [(label, codec) for codec, labels in WEB_LABELS.items() for label in labels.split()],
)
def test_labels_browsers_know_are_known(label, codec):
    text, text_codec = LABELLED_TEXT.get(codec, ("café", "latin-1"))
    body = f"<html><body><p>{text}</p></body></html>".encode(text_codec)
    assert decode(body, f"text/html; charset={label}") == (codec, body.decode(codec))


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ("医学 3\n图片 2\n".encode("gbk"), "医学 3\n图片 2\n"),  # ҽѧ, ͼƬ in UTF-8
        ("医学 3\n".encode(), None),
        ("足球 3\n".encode("gbk"), None),  # no UTF-8
        ("café 1\n".encode(), None),  # caf茅 in GBK: a hanzi inside a Latin word
        ("\ufeffвода 3\n".encode(), None),  # UTF-8 says so
    ],
)
def test_a_text_file_read_as_utf8_has_a_gbk_reading_only_if_that_is_chinese_too(data, expected):
    assert gbk_reading(data) == expected


def test_a_file_name_in_gbk_reads_as_a_person_reads_it():
    named = "/数据/" + "种子.txt".encode("gbk").decode("utf-8", "surrogateescape")
    assert readable(f"{named}, line 2: no URL") == "/数据/种子.txt, line 2: no URL"
    neither = b"\xff\xfe.txt".decode("utf-8", "surrogateescape")
    assert readable(neither) == "\\xff\\xfe.txt"
    assert readable("足球 3") == "足球 3"
    # Two of its bytes are a character in UTF-8: before, `\xb9ؼ\xfc\xb4\xca.txt` (review
    # of the README)
    split = "关键词.txt".encode("gbk").decode("utf-8", "surrogateescape")
    assert readable(f"{split}: keyword file not found") == "关键词.txt: keyword file not found"
    # the message's own words beside a name stay as they are
    name = "足球.txt".encode("gbk").decode("utf-8", "surrogateescape")
    assert readable(f"关键词{name}") == "关键词足球.txt"
    assert readable(f"文件：{name}”") == "文件：足球.txt”"
    assert readable(f"足球{split}") == "足球关键词.txt"


@pytest.mark.parametrize(
    ("codec", "euro", "label"),
    [("gbk", b"\x80", "gbk"), ("big5", b"\xa3\xe1", "big5"), ("big5", b"\xa3\xe1", None)],
)
def test_a_chinese_page_with_euro_signs_reads_as_browsers_read_it(codec, euro, label):
    """Windows GBK (cp936) writes the euro sign as the one byte 0x80 and Big5 (cp950) as
    0xA3E1, which browsers read as €; Python's codecs refuse them. A short GBK price list
    with five was read as Cyrillic or Mac Icelandic, its title nonsense, and scored 0; a
    Big5 one kept its encoding but showed U+FFFD for each price's €."""
    rows = "".join(f"<tr><td>{seat}</td><td>€{price}</td></tr>" for seat, price in SEATS)
    meta = f'<meta http-equiv="Content-Type" content="text/html; charset={label}">' if label else ""
    page = (
        f"<html><head>{meta}<title>歐冠足球比賽門票</title></head>"
        f"<body><table>{rows}</table></body></html>"
    )
    body = b"".join(euro if char == "€" else char.encode(codec) for char in page)
    expected = "gb18030" if codec == "gbk" else "big5hkscs"
    assert decode(body, "text/html") == (expected, page)


SEATS = [("一等座", 180), ("二等座", 120), ("三等座", 80), ("貴賓席", 350), ("學生票", 40)]
