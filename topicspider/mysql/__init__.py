"""MySQL storage of accepted pages and discovered links: the database address, the schema
and the local spool of rows not yet written. :mod:`topicspider.pipelines.mysql` drives them
during a crawl, ``scrapy mysql-replay`` after one."""
