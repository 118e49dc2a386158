"""``scrapy shell``: Scrapy's, which opens a page in an interactive shell, without the
crawl's storage and shared frontier (see :class:`topicspider.commands.OnePage`)."""

from scrapy.commands.shell import Command as ScrapyShellCommand

from topicspider.commands import OnePage


class Command(OnePage, ScrapyShellCommand):
    """Scrapy's ``shell``, run as :class:`OnePage` says."""
