"""Distributed crawling: workers on any number of machines share one crawl through Redis.

``topicspider.scheduler.TopicScheduler`` switches to :mod:`topicspider.redis.scheduler` when
``REDIS_URL`` is set. The frontier is :mod:`~topicspider.redis.queue` (its Redis side in
:mod:`~topicspider.redis.scripts`), the seen-set :mod:`~topicspider.redis.dupefilter`, what
workers must agree on :mod:`~topicspider.redis.crawl`, site partitioning
:mod:`~topicspider.redis.partitions`. Built on scrapy-redis where it fits.
"""
