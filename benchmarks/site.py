"""The benchmark site: 20,000 generated Chinese pages, about ten links each.

Deterministic (one seed per page), so every run of ``make bench`` crawls the same
site; written once into a folder and reused while its stamp matches.
"""

from __future__ import annotations

import html
import json
import random
import shutil
from pathlib import Path

from demo.corpus import COOKING, FINANCE, LINK_TEMPLATES, SPORTS, TRAVEL, Topic

__all__ = ["SECTIONS", "write_site"]

#: Section name → its wording and its share of the pages.
SECTIONS: dict[str, tuple[Topic, float]] = {
    "sports": (SPORTS, 0.3),
    "cooking": (COOKING, 0.25),
    "travel": (TRAVEL, 0.25),
    "finance": (FINANCE, 0.2),
}
VERSION = 1
STAMP = "_bench.json"
BLURBS = ("介绍了事情的来龙去脉", "回顾了整个过程", "给出了更多细节", "分析了背后的原因")


def _plan(pages: int) -> list[str]:
    """The section of every page id."""
    rng = random.Random(pages)
    names = list(SECTIONS)
    shares = [share for _, share in SECTIONS.values()]
    return rng.choices(names, shares, k=pages)


def _title(topic: Topic, rng: random.Random) -> str:
    sentence = topic.fill(rng.choice(topic.templates), rng)
    return sentence.split("，")[0].rstrip("。")[:24]


def _page(i: int, plan: list[str], titles: list[str], by_section: dict[str, list[int]]) -> str:
    rng = random.Random(i * 7919)
    section = plan[i]
    topic = SECTIONS[section][0]
    same = by_section[section]
    targets = [(i + 1) % len(plan)]
    while len(targets) < 8:
        pool = same if rng.random() < 0.7 else range(len(plan))
        target = rng.choice(pool)
        if target != i and target not in targets:
            targets.append(target)
    nav = "".join(f'<li><a href="/{s}/">{s}</a></li>' for s in SECTIONS)
    paragraphs = []
    inline = targets[:5]
    for p in range(rng.randint(5, 9)):
        sentences = [topic.fill(rng.choice(topic.templates), rng) for _ in range(rng.randint(3, 6))]
        if p < len(inline):
            target = inline[p]
            anchor = f'<a href="/{plan[target]}/{target}.html">{html.escape(titles[target])}</a>'
            template = rng.choice(LINK_TEMPLATES["zh"])
            sentences.append(template.format(a=anchor, blurb=rng.choice(BLURBS)))
        paragraphs.append(f"<p>{''.join(sentences)}</p>")
    related = "".join(
        f'<li><a href="/{plan[t]}/{t}.html">{html.escape(titles[t])}</a></li>' for t in targets[5:]
    )
    return (
        '<!DOCTYPE html><html lang="zh"><head><meta charset="utf-8">'
        f"<title>{html.escape(titles[i])}</title></head><body>"
        f'<header><ul class="nav"><li><a href="/">首页</a></li>{nav}</ul></header>'
        f"<article><h1>{html.escape(titles[i])}</h1>{''.join(paragraphs)}</article>"
        f"<aside><h2>相关阅读</h2><ul>{related}</ul></aside>"
        "<footer><p>版权所有 示例新闻网</p></footer></body></html>"
    )


def _index(title: str, links: list[tuple[str, str]]) -> str:
    items = "".join(f'<li><a href="{url}">{html.escape(text)}</a></li>' for url, text in links)
    return (
        '<!DOCTYPE html><html lang="zh"><head><meta charset="utf-8">'
        f"<title>{title}</title></head><body><h1>{title}</h1><ul>{items}</ul></body></html>"
    )


def write_site(root: Path, pages: int = 20_000) -> Path:
    """Write the site under ``root`` unless the same site is already there; return ``root``."""
    stamp = {"version": VERSION, "pages": pages}
    stamp_file = root / STAMP
    if stamp_file.exists() and json.loads(stamp_file.read_text()) == stamp:
        return root
    if root.exists():
        shutil.rmtree(root)
    plan = _plan(pages)
    by_section: dict[str, list[int]] = {name: [] for name in SECTIONS}
    for i, section in enumerate(plan):
        by_section[section].append(i)
    rng = random.Random(0)
    titles = [_title(SECTIONS[section][0], rng) for section in plan]
    for name, ids in by_section.items():
        folder = root / name
        folder.mkdir(parents=True)
        links = [(f"/{name}/{i}.html", titles[i]) for i in ids[:100]]
        (folder / "index.html").write_text(_index(name, links), "utf-8")
    for i in range(pages):
        (root / plan[i] / f"{i}.html").write_text(_page(i, plan, titles, by_section), "utf-8")
    home = [(f"/{name}/", name) for name in SECTIONS] + [
        (f"/{plan[i]}/{i}.html", titles[i]) for i in range(20)
    ]
    (root / "index.html").write_text(_index("示例新闻网", home), "utf-8")
    (root / "robots.txt").write_text("User-agent: *\nDisallow:\n", "utf-8")
    stamp_file.write_text(json.dumps(stamp))
    return root
