import zipfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from topicspider.keywords import KeywordError, load_keywords, parse_inline, parse_keyword_file

ROOT = Path(__file__).resolve().parent.parent


def write(tmp_path: Path, text: str, name: str = "topic.txt") -> Path:
    path = tmp_path / name
    path.write_text(text, "utf-8")
    return path


def test_file_with_comments_spaces_and_chinese(tmp_path):
    path = write(tmp_path, "# sports\n足球 3\n\nworld cup 2.5  # phrase\n  Match 1\n")
    vector = parse_keyword_file(path)
    assert vector.weights == {"足球": 3.0, "world cup": 2.5, "match": 1.0}


def test_repeated_term_adds_weights(tmp_path):
    vector = parse_keyword_file(write(tmp_path, "goal 1\nGoals 2\n"))
    assert vector.weights == {"goal": 3.0}


@pytest.mark.parametrize(
    ("text", "line", "reason"),
    [
        ("足球 3\n篮球\n", 2, "expected 'term weight'"),
        ("足球 3\n篮球 x\n", 2, "is not a number"),
        ("足球 0\n", 1, "must be a positive number"),
        ("足球 3\n\n篮球 -1\n", 3, "must be a positive number"),
        ("足球 nan\n", 1, "must be a positive number"),
        # Squared, these were infinite or 0, and every page scored 0.
        ("足球 1e200\n比赛 1\n", 1, "must be a number from 1e-100 to 1e100"),
        ("足球 1\n比赛 1e-320\n", 2, "must be a number from 1e-100 to 1e100"),
        # As floats, infinite and 0: before, told as not positive.
        ("足球 1e400\n", 1, "must be a number from 1e-100 to 1e100"),
        ("足球 1e-400\n", 1, "must be a number from 1e-100 to 1e100"),
        ("足球 -1e-400\n", 1, "must be a positive number"),
        ("!!! 2\n", 1, "matches nothing"),
        ("x.509 1\n", 1, "numbers, single letters"),
    ],
)
def test_malformed_line_names_file_and_line(tmp_path, text, line, reason):
    path = write(tmp_path, text)
    with pytest.raises(KeywordError) as error:
        parse_keyword_file(path)
    assert f"{path}, line {line}" in str(error.value)
    assert reason in str(error.value)


@pytest.mark.parametrize("mark", ["\f", "\v", "\x1c", "\x85", "\u2028"])
def test_lines_are_numbered_as_an_editor_numbers_them(tmp_path, mark):
    """Only a line feed, a carriage return or both end a line: a form feed (pdftotext puts
    one before each page) or a U+2028 (pasted from a web page) counted as a line too, and
    the mistakes after it were said to be a line further down."""
    path = write(tmp_path, f"足球 3\n{mark}比赛 2\r\n联赛 2\r世界杯 x\n")
    with pytest.raises(KeywordError, match=rf"{path}, line 4: weight 'x' is not a number"):
        parse_keyword_file(path)


def test_empty_and_unreadable_files(tmp_path):
    with pytest.raises(KeywordError, match="no keywords"):
        parse_keyword_file(write(tmp_path, "# nothing\n"))
    latin1 = tmp_path / "latin1.txt"
    latin1.write_bytes("für 3\n".encode("latin-1"))
    with pytest.raises(KeywordError, match="neither UTF-8 nor GBK"):
        parse_keyword_file(latin1)
    with pytest.raises(KeywordError, match="keyword file not found"):
        load_keywords(str(tmp_path / "missing.txt"))
    # Before: "keyword file not found", of a folder that is there.
    with pytest.raises(KeywordError, match=rf"^{tmp_path}: a folder, not a keyword file"):
        load_keywords(str(tmp_path))


NUL_BYTES = "it has NUL bytes: UTF-16, or no text"


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (bytes(5000), NUL_BYTES),
        ("world cup 2\nfootball 3\n".encode("utf-16-le"), NUL_BYTES),
        ("футбол 3\n".encode("cp1251"), "in GBK it reads as rare hanzi, 趔蜥铍: another encoding"),
    ],
    ids=["zeros", "utf-16 without its byte order mark", "cp1251"],
)
def test_a_file_in_no_encoding_it_may_be_in_is_refused_in_one_short_line(tmp_path, data, reason):
    """Valid UTF-8, they were read: a file of zeros was "line 1: expected 'term weight', got
    '\\x00\\x00…'", 20,000 characters long, and UTF-16 "weight '\\x002\\x00' is not a number".
    Valid GBK, cp1251 футбол was the keyword 趔蜥铍, without a word."""
    path = tmp_path / "topic.txt"
    path.write_bytes(data)
    with pytest.raises(KeywordError) as error:
        parse_keyword_file(path)
    assert str(error.value) == f"{path}: keyword file is neither UTF-8 nor GBK ({reason})"


def test_a_russian_file_in_koi8r_is_refused_with_both_readings(tmp_path):
    """KOI8-R's letters are everyday hanzi in GBK: вода was the keyword 紫牧, and the crawl
    looked for it without a word."""
    path = tmp_path / "topic.txt"
    path.write_bytes("сеть 2\nпротокол 3\nсервер 1\n".encode("koi8-r"))
    with pytest.raises(KeywordError) as error:
        parse_keyword_file(path)
    assert str(error.value) == (
        f"{path}: keyword file is neither UTF-8 nor GBK (in GBK it reads as '优载 2 幸显纤咸"
        " 3 优易乓 1', no Chinese word, in KOI8-R as 'сеть 2 протокол 3 сервер 1'): save it as"
        " UTF-8"
    )


@pytest.mark.parametrize(
    ("data", "chinese", "russian"),
    [
        ("вода 3\n".encode("koi8-r"), "紫牧 3", "вода 3"),
        ("сеть 2\nпротокол 3\n".encode("koi8-r"), "优载 2 幸显纤咸 3", "сеть 2 протокол 3"),
        # A name that reads as a Russian word's shape, by chance (one in 25).
        ("赵雷 3\n".encode("gbk"), "赵雷 3", "утюв 3"),
    ],
    ids=["one-russian-word", "two-russian-words", "a-chinese-name"],
)
def test_a_word_or_two_that_may_be_russian_in_koi8r_are_read_as_gbk_with_a_warning(
    tmp_path, data, chinese, russian
):
    """A name or two in GBK can read as Russian in KOI8-R as well: only warned of."""
    path = tmp_path / "topic.txt"
    path.write_bytes(data)
    vector = parse_keyword_file(path)
    assert vector.encoding_warnings() == (
        f"{path}: read as GBK, {chinese!r}, no Chinese word; in KOI8-R it says {russian!r}:"
        " if it is KOI8-R, save it as UTF-8",
    )


@pytest.mark.parametrize(
    "terms",
    ["现在 1\n", "新闻 2\n", "足球 3\n比赛 2\n", "曼城德比 2\n", "vpn 1\n网络 2\n", "上月 1\n"],
)
def test_a_gbk_file_that_reads_as_russian_in_koi8r_too_is_read_as_gbk(tmp_path, terms):
    """现在 is ожтз in KOI8-R, a word's shape: its GBK reading is a word of Chinese (上月,
    which jieba cuts 上|月, too)."""
    path = tmp_path / "topic.txt"
    path.write_bytes(terms.encode("gbk"))
    vector = parse_keyword_file(path)
    assert vector.weights == {
        term.lower(): float(weight) for term, weight in map(str.split, terms.splitlines())
    }
    assert vector.encoding_warnings() == ()


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-be", "utf-32"])
def test_a_keyword_file_with_a_utf16_or_utf32_byte_order_mark_is_read(tmp_path, encoding):
    """Notepad's "Unicode" (UTF-16 with its byte order mark): before, "neither UTF-8 nor
    GBK (invalid start byte)"."""
    path = tmp_path / "unicode.txt"
    mark = "\ufeff" if encoding.endswith("be") else ""  # "utf-16" and "utf-32" write theirs
    path.write_bytes(f"{mark}# 体育\r\n足球 3\r\n比赛 2\r\n".encode(encoding))
    assert parse_keyword_file(path).weights == {"足球": 3.0, "比赛": 2.0}


def test_a_keyword_file_saved_as_gbk_is_read(tmp_path):
    """As Notepad on Chinese Windows saves it; the shipped files are UTF-8."""
    gbk = tmp_path / "gbk.txt"
    gbk.write_bytes("# 体育\n足球 3\n比赛 2\nWorld Cup 1\n".encode("gbk"))
    assert parse_keyword_file(gbk).weights == {"足球": 3.0, "比赛": 2.0, "world cup": 1.0}


@pytest.mark.parametrize(
    ("data", "lines"),
    [
        # A GBK file with a line added in a UTF-8 editor or terminal (`echo 足球 3 >> file`).
        ("# 体育\n".encode("gbk") + "足球 3\n".encode() + "比赛 1\n".encode("gbk"), (2, 1)),
        ("世界杯 2\n比赛 1\n".encode("gbk") + "足球 3\n".encode(), (3, 1)),
        # Here the whole file does not read as GBK: the error named neither line.
        ("足球 3\n世界杯 2\n".encode("gbk") + "比赛 1\n".encode(), (3, 1)),
    ],
    ids=["utf8-inside", "utf8-last", "not-gbk-either"],
)
def test_a_keyword_file_of_utf8_and_gbk_lines_is_refused(tmp_path, data, lines):
    """Read as GBK, UTF-8 足球 was the keyword 瓒崇悆, weighing 3, without a word."""
    mixed = tmp_path / "mixed.txt"
    mixed.write_bytes(data)
    with pytest.raises(KeywordError) as error:
        parse_keyword_file(mixed)
    utf8, gbk = lines
    assert f"line {utf8} is UTF-8 and line {gbk} GBK" in str(error.value)


def test_a_term_that_loses_a_number_or_a_letter_is_kept_with_a_warning(tmp_path):
    """``C types`` is read as pages are, ``type``: every page's types then match it."""
    path = tmp_path / "ffi.txt"
    path.write_text("C types 2\nforeign function 3\nH.264 codec 1\nC语言 1\n", encoding="utf-8")
    vector = parse_keyword_file(path)
    assert vector.weights == {"type": 2.0, "foreign function": 3.0, "codec": 1.0, "c语言": 1.0}
    assert vector.broadened == (
        f"{path}, line 1: term 'C types' is matched as 'type', which is broader: pages are"
        " read without numbers and single letters ('C')",
        f"{path}, line 3: term 'H.264 codec' is matched as 'codec', which is broader: pages"
        " are read without numbers and single letters ('H', '264')",
    )
    assert parse_inline("Python 3:2,asyncio").broadened == (
        "keywords argument, item 1 ('Python 3:2'): term 'Python 3' is matched as 'python',"
        " which is broader: pages are read without numbers and single letters ('3')",
    )
    assert not parse_inline("internet of things,x86 assembly,3D printing").broadened
    languages = parse_inline("C++ templates:2,C#")
    assert languages.weights == {"c++ templat": 2.0, "c#": 1.0}
    assert not languages.broadened
    joined = parse_inline("B-tree:2,SHA-1,D-Bus")
    assert joined.weights == {"b tree": 2.0, "sha 1": 1.0, "d bus": 1.0}
    assert not joined.broadened


def test_gbk_lines_that_are_valid_utf8_are_read_as_gbk(tmp_path):
    # 思路 and 医院 in GBK are valid UTF-8 too (˼· and ҽԺ), but read worse so.
    gbk = tmp_path / "gbk.txt"
    gbk.write_bytes("足球 3\n思路 1\n医院 1\n".encode("gbk"))
    assert parse_keyword_file(gbk).weights == {"足球": 3.0, "思路": 1.0, "医院": 1.0}


def test_a_gbk_file_that_is_valid_utf8_too_is_read_as_utf8_and_keeps_its_gbk_reading(tmp_path):
    """GBK 医学 is valid UTF-8, ҽѧ: a file of that one word was read so without a word."""
    gbk = tmp_path / "medicine.txt"
    gbk.write_bytes("医学 3\n".encode("gbk"))
    vector = parse_keyword_file(gbk)
    assert vector.weights == {"ҽѧ": 3.0}
    assert vector.encoding_warnings() == (
        f"{gbk}: read as UTF-8; in GBK it says '医学 3': if it is GBK, save it as UTF-8;"
        " if it is UTF-8, save it with a byte order mark",
    )


def test_a_gbk_file_that_is_valid_utf8_and_no_keyword_file_so_says_its_gbk_reading(tmp_path):
    gbk = tmp_path / "ideas.txt"
    gbk.write_bytes("思路 3\n".encode("gbk"))
    with pytest.raises(KeywordError) as error:
        parse_keyword_file(gbk)
    assert str(error.value) == (
        f"{gbk}, line 1: term '˼·' matches nothing: pages are read without punctuation,"
        " numbers, single letters and stop words (read as UTF-8; in GBK it says '思路 3':"
        " if it is GBK, save it as UTF-8; if it is UTF-8, save it with a byte order mark)"
    )


@pytest.mark.parametrize(
    "data",
    [
        "医学 3\n".encode(),
        "足球 3\n思路 1\n".encode("gbk"),
        "Москва 3\ncafé 1\n".encode(),
        "\ufeffвода 3\n".encode(),  # Russian that reads as hanzi in GBK, marked UTF-8
        b"football 3\n",
    ],
    ids=["utf8-chinese", "gbk-not-utf8", "utf8-latin-cyrillic", "utf8-with-bom", "ascii"],
)
def test_a_file_that_can_only_be_read_one_way_has_no_gbk_reading(tmp_path, data):
    path = tmp_path / "topic.txt"
    path.write_bytes(data)
    vector = parse_keyword_file(path)
    assert vector.gbk_reading is None
    assert vector.encoding_warnings() == ()


def test_a_vector_says_what_it_matches_in_one_line(tmp_path):
    words = ["足球", "篮球", "排球", "网球", "比赛", "球队", "tweaking"]
    path = write(tmp_path, "".join(f"{word} {n}\n" for n, word in enumerate(words, 1)))
    assert parse_keyword_file(path).describe(shown=3) == (
        f"7 terms from {path}, as pages are matched: tweak 7, 球队 6, 比赛 5, and 4 more"
    )
    assert parse_inline("足球:3").describe() == "1 term, as pages are matched: 足球 3"


@pytest.mark.parametrize("spec", ["keywords/sport.txt,", "/data/a,b.txt", "topics/web,mail"])
def test_a_missing_file_with_a_comma_in_its_name_is_not_taken_for_terms(spec):
    with pytest.raises(KeywordError, match=r"keyword file not found.*inline terms are term:weight"):
        load_keywords(spec)


@pytest.mark.parametrize("spec", ["sports,", ",sports", "sports, "])
def test_a_keyword_file_name_with_a_stray_comma_is_not_taken_for_one_term(spec):
    """Before, ``sports,`` crawled for the one term "sport", not the bundled file's 20."""
    with pytest.raises(KeywordError, match=r"stray comma.*-a keywords=sports for the file"):
        load_keywords(spec)


def test_one_inline_term_with_a_comma_that_names_no_file_is_a_term():
    assert load_keywords("football,").weights == {"footbal": 1.0}


def test_inline_terms_may_have_a_slash():
    assert load_keywords("TCP/IP:2,网络:3").weights == {"tcp ip": 2.0, "网络": 3.0}


def test_inline_terms_too_long_for_a_file_name_or_with_a_tilde():
    """An inline list is first looked for as a file: a name longer than the system allows
    (about 25 Chinese terms), or ``~name`` of no user, is no file, not an error."""
    terms = "足球 比赛 联赛 球队 球员 教练 进球 门将 球迷 世界杯 冠军 决赛 点球 射门 后卫 中场"
    terms += " 前锋 裁判 主场 客场 赛季 转会 角球 越位 助攻 红牌 黄牌 替补 加时 国家队"
    spec = ",".join(f"{term}:1" for term in terms.split()) + ",~world:2"
    assert len(spec.encode()) > 255
    vector = load_keywords(spec)
    assert vector.weights["足球"] == 1
    assert vector.weights["world"] == 2
    with pytest.raises(KeywordError, match=r"~nosuchuser/topic\.txt: keyword file not found"):
        load_keywords("~nosuchuser/topic.txt")


def test_inline_terms():
    vector = parse_inline("足球:3, 体育:2,比赛")
    assert vector.weights == {"足球": 3.0, "体育": 2.0, "比赛": 1.0}
    with pytest.raises(KeywordError, match="item 2"):
        parse_inline("足球:3,体育:zero")


@pytest.mark.parametrize(
    "spec",
    [
        "足球：3，体育：2,比赛",
        "足球:3，体育：2，比赛",
        "足球:3;体育:2;比赛",
        "足球：3；体育：2、比赛",
    ],
)
def test_inline_terms_with_the_marks_a_chinese_input_method_types(spec):
    """Before, ``足球:3，体育:2`` was one term, ``足球 体育``, and a crawl for it stored nothing."""
    assert load_keywords(spec).weights == {"足球": 3.0, "体育": 2.0, "比赛": 1.0}


def test_two_terms_without_a_comma_are_refused():
    """Before, ``新能源汽车:3 电动汽车:2`` was the phrase "新能源汽车:3 电动汽车" weighing 2,
    and a crawl for it stored nothing, without a word."""
    with pytest.raises(KeywordError, match=r"item 1 .*: two terms in one item: separate them"):
        load_keywords("新能源汽车:3 电动汽车:2")


def test_a_term_with_colons_of_its_own_is_one_term():
    """``std::vector:3`` is the term ``std::vector`` weighing 3, as before the refusal of two
    terms in one item, which took its colons for a second weight."""
    assert load_keywords("std::vector:3,Box::new:1").weights == {"std vector": 3.0, "box new": 1.0}


def test_a_term_with_colons_of_its_own_and_no_weight_weighs_one():
    """Before, ``std::vector`` was refused: "weight 'vector' is not a number"."""
    assert load_keywords("std::vector").weights == {"std vector": 1.0}
    assert load_keywords("std::vector,Box::new:2").weights == {"std vector": 1.0, "box new": 2.0}


def test_a_ratio_in_a_term_is_no_weight():
    """Before, ``16:9 屏幕:2`` was refused as two terms, ``16`` weighing 9 and ``屏幕``."""
    assert load_keywords("16:9 屏幕:2").weights == load_keywords("屏幕:2").weights
    with pytest.raises(KeywordError, match="two terms in one item"):
        load_keywords("h264:3 h265:2")


def test_bundled_name_resolves_in_keywords_dir():
    vector = load_keywords("sports")
    assert vector.weights["足球"] == 3.0
    assert vector.weights["world cup"] == 2.0
    for path in (ROOT / "keywords").glob("*.txt"):
        assert len(parse_keyword_file(path)) >= 5


def test_unknown_name_lists_available_topics():
    with pytest.raises(KeywordError, match=r"available: .*sports"):
        load_keywords("nosuchtopic")


def test_bundled_names_resolve_inside_a_zipped_egg(tmp_path):
    egg = tmp_path / "project.egg"
    with zipfile.ZipFile(egg, "w") as archive:
        archive.write(ROOT / "keywords" / "sports.txt", "topicspider/keywords/sports.txt")
    bundled = zipfile.Path(egg, "topicspider/keywords/")
    assert load_keywords("sports", bundled) == parse_keyword_file(ROOT / "keywords" / "sports.txt")
    with pytest.raises(KeywordError, match=r"available: sports\)"):
        load_keywords("nosuchtopic", bundled)


def test_to_text_round_trips(tmp_path):
    vector = parse_inline("足球:3,world cup:2")
    assert parse_keyword_file(write(tmp_path, vector.to_text())) == vector


_TERM = st.text(
    alphabet=st.characters(categories=("L", "N"), include_characters="足球比赛 -"),
    min_size=1,
    max_size=12,
).filter(lambda term: any(ch.isalnum() for ch in term))


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(_TERM, st.floats(min_value=0.01, max_value=1000), min_size=1, max_size=8))
def test_any_written_keyword_file_parses_back(tmp_path_factory, weights):
    """Whatever terms and positive weights a file holds, it parses, and every weight survives."""
    path = tmp_path_factory.mktemp("kw") / "topic.txt"
    path.write_text("".join(f"{term} {weight!r}\n" for term, weight in weights.items()), "utf-8")
    try:
        vector = parse_keyword_file(path)
    except KeywordError as error:
        refused = str(error)
    else:
        refused = ""
    if refused:
        # Only a term made of stop words or digits alone may be refused, and it is named.
        assert "matches nothing" in refused
        return
    assert all(weight > 0 for weight in vector.weights.values())
    assert sum(vector.weights.values()) <= sum(weights.values()) * (1 + 1e-9)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=200))
def test_arbitrary_lines_parse_or_fail_with_file_and_line(tmp_path_factory, text):
    path = tmp_path_factory.mktemp("kw") / "topic.txt"
    path.write_text(text, "utf-8", newline="")
    try:
        parse_keyword_file(path)
    except KeywordError as error:
        refused = str(error)
    else:
        refused = str(path)
    assert str(path) in refused


def test_gbk_bytes_under_a_utf8_locale_are_said_to_be_no_utf8(tmp_path):
    """Before: "term '\\udcd7\\udce3' matches nothing". A file whose name has GBK bytes is
    read all the same."""
    as_argument = "足球:3".encode("gbk").decode("utf-8", "surrogateescape")
    with pytest.raises(KeywordError, match=r"item 1 .*: not UTF-8 text \(GBK bytes"):
        load_keywords(as_argument)
    named = tmp_path / "足球.txt".encode("gbk").decode("utf-8", "surrogateescape")
    named.write_text("足球 3\n", "utf-8")
    assert load_keywords(str(named)).weights == {"足球": 3.0}
