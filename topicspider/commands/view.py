"""``scrapy view``: Scrapy's, which opens a page in the browser, without the crawl's
storage and shared frontier (see :class:`topicspider.commands.OnePage`)."""

from scrapy.commands.view import Command as ScrapyViewCommand

from topicspider.commands import OnePage


class Command(OnePage, ScrapyViewCommand):
    """Scrapy's ``view``, run as :class:`OnePage` says."""
