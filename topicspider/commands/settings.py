"""``scrapy settings``: Scrapy's, showing the values a crawl runs with. The project's add-ons
(``ADDONS``) set some when a crawler is made, which Scrapy's command never does: it showed
Scrapy's own User-Agent, not the one with ``TOPIC_CONTACT`` every request sends."""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrapy import Spider
from scrapy.commands.settings import Command as ScrapySettingsCommand
from scrapy.crawler import Crawler

if TYPE_CHECKING:
    import argparse


class Command(ScrapySettingsCommand):
    """Scrapy's ``settings``, after the add-ons."""

    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        crawler = Crawler(Spider, self.settings)
        crawler.addons.load_settings(crawler.settings)
        self.settings = crawler.settings
        super().run(args, opts)
