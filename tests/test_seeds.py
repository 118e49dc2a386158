import pytest

from topicspider.exceptions import SeedError
from topicspider.seeds import load_seeds


def test_comma_separated_urls_deduplicated():
    seeds = load_seeds(
        "http://127.0.0.1:8000/, http://127.0.0.1:8000/a.html,http://127.0.0.1:8000/"
    )
    assert seeds == ["http://127.0.0.1:8000/", "http://127.0.0.1:8000/a.html"]


@pytest.mark.parametrize("encoding", ["utf-8", "utf-8-sig", "gbk"])
def test_seed_file_with_comments(tmp_path, encoding):
    path = tmp_path / "seeds.txt"
    path.write_text(
        "# 从这里开始\nhttp://127.0.0.1/体育/\n\nhttps://127.0.0.1/x  # second\n", encoding
    )
    assert load_seeds(str(path)) == ["http://127.0.0.1/%E4%BD%93%E8%82%B2/", "https://127.0.0.1/x"]


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("", "no seeds"),
        ("ftp://127.0.0.1/", "is not an http(s) URL"),
        ("http://127.0.0.1/,javascript:alert(1)", "item 2"),
        ("missing-seeds.txt", "seed file not found"),
        ("http://[::1/", "is not a valid URL (Invalid IPv6 URL)"),
        ("http://127.0.0.1:99999/", "is not a valid URL (Port out of range"),
        ("~nosuchuser/seeds.txt", "cannot read seed file: Could not determine home directory"),
        ("seeds\0.txt", "cannot read seed file: embedded null byte"),
    ],
)
def test_bad_seeds(spec, message):
    with pytest.raises(SeedError, match=message.replace("(", r"\(").replace(")", r"\)")):
        load_seeds(spec)


def test_bad_line_in_seed_file_names_it(tmp_path):
    path = tmp_path / "seeds.txt"
    path.write_text("http://127.0.0.1/\nnot a url\n", "utf-8")
    with pytest.raises(SeedError, match=f"{path}, line 2"):
        load_seeds(str(path))


def test_lines_are_numbered_as_an_editor_numbers_them(tmp_path):
    """Before, a form feed (``pdftotext`` puts one before each page) ended a line too."""
    path = tmp_path / "seeds.txt"
    path.write_text("http://127.0.0.1/\n\x0c\nnot a url\n", "utf-8")
    with pytest.raises(SeedError, match=f"{path}, line 3"):
        load_seeds(str(path))


@pytest.mark.parametrize(
    ("spec", "where"),
    [
        ("http://127.0.0.1/a.html http://127.0.0.1/b.html", "seeds argument, item 1"),
        ("http://127.0.0.1/,http://127.0.0.1/a b.html", "seeds argument, item 2"),
    ],
)
def test_seeds_separated_by_spaces_are_refused_not_taken_for_one_url(spec, where):
    with pytest.raises(SeedError, match=f"{where}: .* has a space in it"):
        load_seeds(spec)


def test_a_seed_file_of_urls_and_titles_is_refused_not_read_as_urls(tmp_path):
    """What a spreadsheet's two columns, copied, give."""
    path = tmp_path / "seeds.txt"
    path.write_text("http://127.0.0.1/\t首页\r\nhttp://127.0.0.1/体育/\t体育\r\n", "gbk")
    with pytest.raises(SeedError, match=f"{path}, line 1: .* has a space in it"):
        load_seeds(str(path))


def test_a_seed_file_neither_utf8_nor_gbk_is_refused(tmp_path):
    path = tmp_path / "seeds.txt"
    path.write_bytes("# für Müller\nhttp://127.0.0.1/\n".encode("latin-1"))
    with pytest.raises(SeedError, match="seed file is neither UTF-8 nor GBK"):
        load_seeds(str(path))


def test_a_utf16_seed_file_without_a_byte_order_mark_is_said_so(tmp_path):
    """Before: ``line 2: '\\x00' is not an http(s) URL``."""
    path = tmp_path / "seeds.txt"
    path.write_bytes("http://127.0.0.1/\nhttp://127.0.0.1/a.html\n".encode("utf-16-le"))
    with pytest.raises(SeedError) as error:
        load_seeds(str(path))
    assert str(error.value) == (
        f"{path}: seed file is neither UTF-8 nor GBK (it has NUL bytes: UTF-16, or no text)"
    )


def test_inline_seeds_separated_by_a_full_width_comma_are_two_seeds():
    assert load_seeds("http://127.0.0.1/体育/，http://127.0.0.1/a.html") == [
        "http://127.0.0.1/%E4%BD%93%E8%82%B2/",
        "http://127.0.0.1/a.html",
    ]


def test_gbk_bytes_under_a_utf8_locale_are_said_to_be_no_utf8():
    """Before: "is not a valid URL ('utf-8' codec can't encode characters ...)"."""
    seed = "http://127.0.0.1/" + "足球.html".encode("gbk").decode("utf-8", "surrogateescape")
    with pytest.raises(SeedError, match=r"item 1: .* is not UTF-8 text \(GBK bytes"):
        load_seeds(seed)
