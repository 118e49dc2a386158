"""Signals topicspider sends, beside Scrapy's own."""

#: Sent by the spider for every fetched HTML page once it is scored, with
#: ``url``, ``relevance``, ``accepted`` (stored or not), ``depth`` and ``score``
#: (the link score it was fetched with). Progress, fetch log and reports listen.
page_scored = object()
