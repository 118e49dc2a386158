"""``scrapy fetch``: Scrapy's, which shows a page's body (or headers), without the
crawl's storage and shared frontier (see :class:`topicspider.commands.OnePage`)."""

from scrapy.commands.fetch import Command as ScrapyFetchCommand

from topicspider.commands import OnePage


class Command(OnePage, ScrapyFetchCommand):
    """Scrapy's ``fetch``, run as :class:`OnePage` says."""
