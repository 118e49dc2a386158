"""The project's settings: every ``TOPIC_*`` default is documented in the README's table."""

from __future__ import annotations

import re
from pathlib import Path

from topicspider import settings as defaults

README = Path(__file__).resolve().parent.parent / "README.md"


def test_every_topic_setting_has_a_readme_row_with_its_default():
    rows = dict(re.findall(r"^\| `(TOPIC_[A-Z_]+)` \| ([^|]+) \|", README.read_text("utf-8"), re.M))
    names = [name for name in vars(defaults) if name.startswith("TOPIC_")]
    assert sorted(rows) == sorted(names)
    for name in names:
        value = getattr(defaults, name)
        shown = value if isinstance(value, str) else repr(value)
        assert rows[name].strip() == (f"`{shown}`" if shown else "empty"), name
