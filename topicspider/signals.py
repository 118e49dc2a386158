"""Signals topicspider sends, beside Scrapy's own."""

#: Sent by the spider for every fetched HTML page once it is scored, with ``url``,
#: ``relevance``, ``accepted`` (stored or not), ``depth``, ``score`` (the link score it was
#: fetched with), ``threshold`` (the one its verdict used) and ``listed`` (a table of contents
#: of the topic names it: that threshold was ``TOPIC_LISTED_THRESHOLD``). Progress, fetch log
#: and reports listen.
page_scored = object()

#: Sent by the spider for every fetched HTML page with ``page_url`` and ``links``: one dict
#: per on-site out-link with ``url``, ``anchor``, ``score`` and ``followed`` (False when the
#: page is past the tunnel limit). The crawl's frontier history, for storage that keeps it.
#: Sent again with the page's ``page_url`` for each script of the page whose links the crawl
#: reads (:mod:`topicspider.scripts`), once that script is fetched: later, and possibly with
#: links the page's markup had too.
links_discovered = object()

#: Sent by :class:`~topicspider.pipelines.ItemPipelines` before the item pipelines close, once
#: the pages in progress are parsed: the last moment a handler may send them items (it may
#: be a coroutine; they close once it is done). Scrapy tells nobody between the two.
item_pipelines_closing = object()
