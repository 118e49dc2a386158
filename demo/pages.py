"""Renders the demo site's pages to HTML from the plan in :mod:`demo.layout`.

Every page gets a nav block of short links, generated paragraphs and in-text links whose anchor
and sentence describe the target; only on-topic pages link into the on-topic sections.
"""

# Chinese prose uses full-width punctuation on purpose.

from __future__ import annotations

import html
import posixpath
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from demo import corpus
from demo.corpus import Topic
from demo.layout import (
    CHARSETS,
    HUB,
    OFFSITE_URLS,
    PRIVATE,
    SECTIONS,
    SEED,
    Article,
    Section,
)


@dataclass
class Page:
    """One HTML page before encoding: ``charset`` names an entry of ``CHARSETS``."""

    path: str
    lang: str
    title: str
    body: str
    nav: list[tuple[str, str]]
    charset: str = "utf-8"
    base: str | None = None


def build_pages(seed: int) -> list[Page]:
    """Every HTML page of the site; the same ``seed`` gives the same pages."""
    pages = [_home(seed), _hub(seed), _english_home(seed), _private(seed)]
    for section in SECTIONS:
        pages.append(_section_index(section, seed))
        pages.extend(_article(section, article, seed) for article in section.articles)
    return pages


def _home(seed: int) -> Page:
    rng = _rng(seed, SEED)
    offtopic = [s for s in SECTIONS if s.lang == "zh" and not s.on_topic]
    featured = rng.sample([(s, a) for s in offtopic for a in s.articles], 4)
    body = "\n".join(
        [
            "<h1>生活网</h1>",
            _prose(rng, corpus.PORTAL, 1),
            "<h2>今日推荐</h2>",
            _list(_item(s.folder + a.slug, a.title, a.blurb, "zh") for s, a in featured),
            "<h2>频道</h2>",
            _list(
                [
                    *(f"{_a(s.index, s.label + '频道')}：{_esc(s.note)}" for s in offtopic),
                    f"{_a('/en/index.html', 'English edition')}：英文版生活内容",
                ]
            ),
            f"<p>找不到想看的内容？打开{_a(HUB, '网站导航')}，可以看到全部频道和栏目。</p>",
            '<p class="links">'
            + " · ".join(
                [
                    _a("mailto:editor@example.invalid", "联系我们"),
                    _a(OFFSITE_URLS[0], "合作伙伴"),
                    _a("/files/menu.pdf", "本月菜单（PDF）"),
                    _a("/images/dumplings.jpg", "饺子图片"),
                    _a(PRIVATE, "员工内部资料"),
                ]
            )
            + "</p>",
        ]
    )
    return Page(SEED, "zh", "生活网 - 首页", body, _nav("zh", on_topic=False))


def _hub(seed: int) -> Page:
    """The only door to the sports section: a plain site map with little topical text."""
    rng = _rng(seed, HUB)
    zh = [s for s in SECTIONS if s.lang == "zh"]
    body = "\n".join(
        [
            "<h1>网站导航</h1>",
            _prose(rng, corpus.PORTAL, 1),
            _list(
                [
                    *(f"{_a(s.index, s.label + '频道')}：{_esc(s.note)}" for s in zh),
                    f"{_a('/en/index.html', 'English edition')}：英文版生活内容",
                    _a(SEED, "返回首页"),
                ]
            ),
        ]
    )
    return Page(HUB, "zh", "网站导航 - 生活网", body, _nav("zh", on_topic=False))


def _english_home(seed: int) -> Page:
    path = "/en/index.html"
    rng = _rng(seed, path)
    sections = [s for s in SECTIONS if s.lang == "en" and not s.on_topic]
    body = "\n".join(
        [
            "<h1>Life &amp; Leisure — English edition</h1>",
            _prose(rng, corpus.PORTAL_EN, 1),
            _list(f"{_a(s.index, s.label)}: {_esc(s.note)}" for s in sections),
            f"<p>Every channel, Chinese ones included, is listed in the {_a(HUB, 'site map')}.</p>",
        ]
    )
    return Page(
        path,
        "en",
        "Life & Leisure — English edition",
        body,
        _nav("en", on_topic=False),
        charset="utf-8/header",
    )


def _private(seed: int) -> Page:
    """Tempting on-topic text behind robots.txt: a crawl that stores it did not obey."""
    rng = _rng(seed, PRIVATE)
    title = "内部资料：球队转会预算（请勿外传）"
    body = "\n".join(
        [
            f"<h1>{_esc(title)}</h1>",
            "<p>本页面仅供编辑部内部查阅，请勿转发。</p>",
            _prose(rng, corpus.SPORTS, 2),
        ]
    )
    return Page(PRIVATE, "zh", f"{title} - 生活网", body, _nav("zh", on_topic=False))


def _section_index(section: Section, seed: int) -> Page:
    rng = _rng(seed, section.index)
    lang = section.lang
    body = "\n".join(
        filter(
            None,
            [
                f"<h1>{_esc(section.title)}</h1>",
                _prose(rng, section.topic, rng.randint(1, 2), lead=section.intro),
                _list(_item(a.slug, a.title, a.blurb, lang) for a in section.articles),
                section.extra,
            ],
        )
    )
    return Page(
        section.index, lang, _full_title(section.title, lang), body, _nav(lang, section.on_topic)
    )


def _article(section: Section, article: Article, seed: int) -> Page:
    path = section.folder + article.slug
    rng = _rng(seed, path)
    lang = section.lang
    siblings = [(section, a) for a in section.articles if a is not article]
    # Off-topic articles also link across sections (densely); on-topic ones stay among
    # themselves, and only section indexes link across languages.
    others = [
        (s, a)
        for s in SECTIONS
        if s is not section and not s.on_topic and not section.on_topic and s.lang == lang
        for a in s.articles
    ]
    targets = rng.sample(siblings, min(3, len(siblings))) + rng.sample(others, min(2, len(others)))
    # Hrefs are relative to the section folder, which nested pages declare as their <base>.
    links = [
        _link_sentence(
            rng, lang, posixpath.relpath(s.folder + a.slug, section.folder), a.title, a.blurb
        )
        for s, a in targets
    ]
    body = "\n".join(
        filter(
            None,
            [
                f"<h1>{_esc(article.title)}</h1>",
                _byline(rng, lang),
                _prose(
                    rng,
                    section.topic,
                    rng.randint(3, 4),
                    lead=corpus.LEADS[lang].format(blurb=article.blurb),
                    links=links,
                ),
                article.extra,
                _tags(section),
            ],
        )
    )
    return Page(
        path,
        lang,
        _full_title(article.title, lang),
        body,
        _nav(lang, section.on_topic),
        charset=article.charset,
        base=section.folder if article.nested_with_base else None,
    )


# --- HTML ------------------------------------------------------------------


def render(page: Page) -> str:
    """The full HTML document; encode it with the page's codec from ``CHARSETS``."""
    _, meta, _ = CHARSETS[page.charset]
    head = [meta] if meta else []
    head.append(f"<title>{_esc(page.title)}</title>")
    if page.base:
        head.append(f'<base href="{html.escape(page.base)}">')
    nav = " | ".join(_a(href, label) for href, label in page.nav)
    footer = "版权所有 2024 生活网" if page.lang == "zh" else "Copyright 2024 Life &amp; Leisure"
    return (
        "<!DOCTYPE html>\n"
        f'<html lang="{"zh-CN" if page.lang == "zh" else "en"}">\n'
        "<head>\n" + "\n".join(head) + "\n</head>\n<body>\n"
        f'<nav class="site-nav">{nav}</nav>\n'
        f"<main>\n{page.body}\n</main>\n"
        f"<footer>{footer}</footer>\n</body>\n</html>\n"
    )


def _nav(lang: str, on_topic: bool) -> list[tuple[str, str]]:
    """Many short links on every page; only on-topic pages link into the on-topic sections."""
    if lang == "zh":
        links = [(SEED, "首页"), (HUB, "网站导航")]
        tail = [("/en/index.html", "English")]
    else:
        links = [("/en/index.html", "Home"), (HUB, "Site map")]
        tail = [(SEED, "中文")]
    links += [
        (s.index, s.label) for s in SECTIONS if s.lang == lang and (on_topic or not s.on_topic)
    ]
    return links + tail


def _prose(
    rng: random.Random,
    topic: Topic,
    paragraphs: int,
    lead: str | None = None,
    links: Sequence[str] = (),
) -> str:
    """Paragraphs of escaped sentences; ``links`` (already HTML) land at random places."""
    sizes = [rng.randint(3, 5) for _ in range(paragraphs)]
    sentences = [_esc(s) for s in topic.sentences(rng, sum(sizes))]
    chunks = []
    for size in sizes:
        chunks.append(sentences[:size])
        sentences = sentences[size:]
    if lead:
        chunks[0].insert(0, _esc(lead))
    for link in links:
        chunk = rng.choice(chunks)
        chunk.insert(rng.randint(1, len(chunk)), link)
    joiner = "" if topic.lang == "zh" else " "
    return "\n".join(f"<p>{joiner.join(chunk)}</p>" for chunk in chunks if chunk)


def _link_sentence(rng: random.Random, lang: str, href: str, title: str, blurb: str) -> str:
    before, after = rng.choice(corpus.LINK_TEMPLATES[lang]).split("{a}")
    return _esc(before.format(blurb=blurb)) + _a(href, title) + _esc(after.format(blurb=blurb))


def _byline(rng: random.Random, lang: str) -> str:
    date = f"2024-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
    author = rng.choice(corpus.AUTHORS[lang])
    text = f"{date} 来源：生活网 编辑：{author}" if lang == "zh" else f"{date} · by {author}"
    return f'<p class="byline">{_esc(text)}</p>'


def _tags(section: Section) -> str:
    # "、" rather than "·": Python's gb2312 codec has no U+00B7.
    text = (
        "标签：" + "、".join(section.tags)
        if section.lang == "zh"
        else ("Tags: " + " · ".join(section.tags))
    )
    return f'<p class="tags">{_esc(text)}</p>'


def _item(href: str, title: str, blurb: str, lang: str) -> str:
    sep = "：" if lang == "zh" else ": "
    return _a(href, title) + sep + _esc(corpus.LEADS[lang].format(blurb=blurb))


def _list(items: Iterable[str]) -> str:
    return "<ul>\n" + "\n".join(f"<li>{item}</li>" for item in items) + "\n</ul>"


def _a(href: str, text: str) -> str:
    return f'<a href="{html.escape(href)}">{_esc(text)}</a>'


def _esc(text: str) -> str:
    return html.escape(text, quote=False)


def _full_title(title: str, lang: str) -> str:
    return f"{title} - 生活网" if lang == "zh" else f"{title} | Life & Leisure"


def _rng(seed: int, path: str) -> random.Random:
    """One generator per page, so a page's text does not depend on the order pages are built."""
    return random.Random(f"{seed}:{path}")
