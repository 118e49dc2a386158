"""topicspider's errors: one root, one subclass per kind of bad input."""


class TopicSpiderError(Exception):
    """Base class of every error topicspider reports to its user."""


class KeywordError(TopicSpiderError, ValueError):
    """The keyword specification cannot be used; the message says where and why."""


class NoKeywords(KeywordError):
    """No keywords were given: what ``scrapy fetch``, ``shell`` and ``view`` cannot give."""


class SeedError(TopicSpiderError, ValueError):
    """The seed list cannot be used; the message says where and why."""


class SourceError(TopicSpiderError, ValueError):
    """A sample page (file, folder or URL) cannot be read or has no text."""


class ConfigError(TopicSpiderError, ValueError):
    """A setting has a value topicspider cannot use."""


class ArgumentError(TopicSpiderError, ValueError):
    """A spider argument is unknown, or one other than the seeds and keywords cannot be used."""
