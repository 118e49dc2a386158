"""Scrapy settings for topicspider: every ``TOPIC_*`` default lives here.

Override any of them with ``-s NAME=value`` or in your own settings module;
the README documents each one.
"""

BOT_NAME = "topicspider"
SPIDER_MODULES = ["topicspider.spiders"]
NEWSPIDER_MODULE = "topicspider.spiders"
COMMANDS_MODULE = "topicspider.commands"

# --- Relevance -------------------------------------------------------------
# Pages whose relevance (cosine to the keyword vector) is below this are not stored.
TOPIC_THRESHOLD = 0.15
# best_first | bfs | dfs
TOPIC_STRATEGY = "best_first"
# How many irrelevant pages in a row the crawl may cross to reach an on-topic section.
TOPIC_TUNNEL_DEPTH = 2
# Term weighting of page vectors: "tf" (sublinear term frequency) or "tfidf"
# (idf learned from the pages seen so far in this crawl).
TOPIC_WEIGHTING = "tf"
# The title counts this many times the body in the page vector.
TOPIC_TITLE_WEIGHT = 3.0
# Link score = ANCHOR * cos(anchor text + context + URL words) + (1 - ANCHOR) * parent relevance.
TOPIC_ANCHOR_WEIGHT = 0.6
# Characters of text on each side of a link that count as its context.
TOPIC_CONTEXT_CHARS = 60
# Only the first this many characters of a page's body are tokenized.
TOPIC_MAX_TEXT_CHARS = 20000
# Stay on the seeds' sites unless this is False.
TOPIC_STAY_ON_SITE = True

# --- Storage ---------------------------------------------------------------
# Accepted pages are written here as raw bytes, with an index.jsonl beside them.
TOPIC_PAGES_DIR = "pages"

# --- Progress --------------------------------------------------------------
# Seconds between progress log lines (0 turns them off).
TOPIC_PROGRESS_INTERVAL = 30.0
# If set, a JSON-lines file of every scored page in fetch order (url, relevance, accepted, ...).
TOPIC_FETCH_LOG = ""

# --- Download slots (local and Redis mode) ---------------------------------
# "host": one download slot per host (polite); "aphash": a host's URLs spread over TOPIC_SLOTS
# slots by the APHash of the URL, for more concurrency on one large site.
TOPIC_SLOT_POLICY = "host"
# Slots per host with TOPIC_SLOT_POLICY = "aphash".
TOPIC_SLOTS = 4

# --- Distributed crawling (Redis) --------------------------------------------
# A redis:// URL switches on the shared frontier; empty: a local crawl.
REDIS_URL = ""
# Keyword arguments of the Redis client (redis-py); nothing is retried inside it.
REDIS_PARAMS = {"socket_timeout": 10, "socket_connect_timeout": 5}
# Name of the shared crawl (Redis keys topicspider:<id>:*); empty: the spider's name.
TOPIC_CRAWL_ID = ""
# Dupefilter of the shared crawl; the exact Redis set is checked inside the frontier's script.
REDIS_DUPEFILTER_CLASS = "topicspider.redis.dupefilter.RedisDupeFilter"
# Seconds a worker's requests stay leased without a heartbeat before going back to the frontier.
REDIS_LEASE = 60.0
# Seconds an idle worker waits for others' in-flight work before leaving (0: forever).
REDIS_IDLE_TIMEOUT = 180.0
# Seconds between polls of Redis while the worker has nothing to do.
REDIS_POLL_INTERVAL = 0.2
# Fingerprints this worker remembers sending, so rediscovered links cost no round trip.
REDIS_SEEN_CACHE = 100000
# Number of domain-hash partitions of the frontier (every worker of a crawl must agree).
TOPIC_PARTITIONS = 1
# Partitions this worker serves, e.g. "0,2"; empty: all of them.
TOPIC_WORKER_PARTITIONS = ""

# --- Scrapy components -----------------------------------------------------
SCHEDULER = "topicspider.scheduler.TopicScheduler"
SCHEDULER_PRIORITY_QUEUE = "topicspider.pqueues.ScorePriorityQueue"
SCHEDULER_MEMORY_QUEUE = "topicspider.pqueues.MemoryQueue"
SCHEDULER_DISK_QUEUE = "topicspider.pqueues.DiskQueue"

SPIDER_MIDDLEWARES = {
    "topicspider.slots.SlotPolicyMiddleware": 600,
}

ITEM_PIPELINES = {
    "topicspider.pipelines.files.FilesystemPipeline": 300,
}

EXTENSIONS = {
    "topicspider.extensions.progress.Progress": 500,
    "topicspider.extensions.fetchlog.FetchLog": 510,
}

# --- Politeness and Scrapy defaults -----------------------------------------
USER_AGENT = "topicspider/0.1 (+https://pypi.org/project/scrapy/; focused crawler)"
ROBOTSTXT_OBEY = True
CONCURRENT_REQUESTS = 16
# Per-host concurrency is low for politeness and for focus: requests are chosen when a
# slot has room, so fewer in flight means each choice sees more scored links.
CONCURRENT_REQUESTS_PER_DOMAIN = 2
DOWNLOAD_DELAY = 0
DEPTH_PRIORITY = 0
LOG_LEVEL = "INFO"
REQUEST_FINGERPRINTER_IMPLEMENTATION = "2.7"
FEED_EXPORT_ENCODING = "utf-8"
