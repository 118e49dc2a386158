"""``make demo``: write the demo site, serve it on 127.0.0.1, crawl it, show what was kept."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from urllib.parse import urlsplit

from demo.crawl import SCRAPY, topic_args
from demo.site import serve, write_site

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    pages_dir = ROOT / "pages" / "demo"
    shutil.rmtree(pages_dir, ignore_errors=True)
    with tempfile.TemporaryDirectory(prefix="topicspider-demo-") as tmp:
        site = write_site(Path(tmp))
        server, base = serve(site.root)
        try:
            print(f"Demo site ({len(list(site.root.rglob('*.html')))} pages) at {base}/")
            command = SCRAPY + topic_args(
                f"{base}{site.seed_path}",
                "sports",
                f"TOPIC_PAGES_DIR={pages_dir}",
                "LOG_LEVEL=INFO",
                "TOPIC_PROGRESS_INTERVAL=5",
            )
            print("$", " ".join(command[2:]))
            subprocess.run(
                command, cwd=ROOT, check=True, env={**os.environ, "PYTHONPATH": str(ROOT)}
            )
        finally:
            server.shutdown()
    index = pages_dir / "index.jsonl"
    rows = [json.loads(line) for line in index.read_text("utf-8").splitlines()]
    on_topic = sum(urlsplit(row["url"]).path in site.on_topic for row in rows)
    print(f"\nKept {len(rows)} pages ({on_topic} of them in the on-topic section):")
    for row in sorted(rows, key=lambda row: -row["relevance"])[:15]:
        print(f"  {row['relevance']:.3f}  {row['charset']:<8} {row['title'][:40]}  {row['path']}")
    print(f"\nPages: {pages_dir}/\nIndex: {index}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
