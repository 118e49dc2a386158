"""topicspider: a focused (topic) web crawler built on Scrapy."""

__version__ = "0.1.0"
