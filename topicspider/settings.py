"""Scrapy settings for topicspider: every ``TOPIC_*`` and ``MYSQL_*`` default lives here.

Override any of them with ``-s NAME=value`` or in your own settings module;
the README documents each one.
"""

import os

BOT_NAME = "topicspider"
SPIDER_MODULES = ["topicspider.spiders"]
NEWSPIDER_MODULE = "topicspider.spiders"
COMMANDS_MODULE = "topicspider.commands"

# --- Relevance -------------------------------------------------------------
# Pages whose relevance (cosine to the keyword vector) is below this are not stored
# (TOPIC_THRESHOLD_MODE = "fixed"); with "adaptive", the most the threshold asks.
TOPIC_THRESHOLD = 0.12
# "adaptive": RATIO x the median relevance of the TOP best pages scored so far, between
# TOPIC_THRESHOLD_MIN and TOPIC_THRESHOLD; "fixed": TOPIC_THRESHOLD.
TOPIC_THRESHOLD_MODE = "adaptive"
TOPIC_THRESHOLD_MIN = 0.05
TOPIC_THRESHOLD_RATIO = 0.7
TOPIC_THRESHOLD_TOP = 10
# Until TOPIC_THRESHOLD_TOP pages have scored above 0, a page the adaptive threshold accepts
# (at or near its floor) waits, and is judged again once they have (False: judged at once).
TOPIC_THRESHOLD_WAIT = True
# A page that a table of contents of the topic lists (a relevant page mostly of links, at
# least half of whose link text mentions the topic) is stored from this relevance, when the
# threshold above asks more (TOPIC_THRESHOLD or higher: off).
TOPIC_LISTED_THRESHOLD = 0.05
# best_first | bfs | dfs
TOPIC_STRATEGY = "best_first"
# How many irrelevant pages in a row whose every link is followed; past them, only links whose
# anchor, context or URL mention the topic are.
TOPIC_TUNNEL_DEPTH = 2
# In a crawl with a budget (CLOSESPIDER_PAGECOUNT, _ITEMCOUNT, _TIMEOUT, _PAGECOUNT_NO_ITEM or
# _TIMEOUT_NO_ITEM), the links past the tunnel are queued behind every other link instead of
# dropped: a crawl that runs out of links that mention the topic spends the rest of its budget
# on them, breadth-first. Without a budget the crawl ends there.
TOPIC_TUNNEL_RESERVE = True
# Term weighting of page vectors: "tf" (sublinear term frequency) or "tfidf"
# (idf learned from the pages seen so far in this crawl).
TOPIC_WEIGHTING = "tf"
# The title counts this many times the body in the page vector.
TOPIC_TITLE_WEIGHT = 3.0
# Link score (best_first) = ANCHOR x cos(anchor text + context + URL words)
#   + PARENT x relevance of the page the link is on + PATTERN x yield of the link's URL template
#   + IMPORTANCE x on-line importance (OPIC cash; 0 turns its bookkeeping off).
TOPIC_ANCHOR_WEIGHT = 0.6
TOPIC_PARENT_WEIGHT = 0.4
# A page's parent term for its links is the larger of its own relevance and this share of
# the parent term of the link that led to it (shark search): off-topic pages one or two
# links from an on-topic one outrank pages with no on-topic page behind them.
TOPIC_PARENT_DECAY = 0.5
TOPIC_PATTERN_WEIGHT = 0.1
TOPIC_IMPORTANCE_WEIGHT = 0.0
# Let the weights above move with the crawl, towards each term's correlation with the
# relevance of the pages its links led to; the settings act as a prior worth WARMUP pages.
TOPIC_ADAPTIVE = True
TOPIC_ADAPTIVE_WARMUP = 50
# Drop links to calendar, print and share URLs, a forum's login and reply forms, and URL
# templates that yielded nothing on topic in 30 fetches. (Session ids and tracking parameters
# are always taken out of links.)
TOPIC_DROP_NOISE_URLS = True
# Once this many of a page's links were fetched and none was relevant, its other links go
# back in the frontier at half their score, and half again each time that count doubles
# (0: off).
TOPIC_BARREN_SIBLINGS = 10
# Follow links to the page itself in another language (marked with hreflang, or a switcher
# of its address with other language codes): off, the crawl stays in the seeds' language.
TOPIC_FOLLOW_TRANSLATIONS = False
# Read the links a page's scripts write (document.write, a contents tree filled by a script
# every page loads): inline scripts as the page is read; the site's own script files fetched
# once each, before other links, their links followed as the page's.
TOPIC_SCRIPT_LINKS = True
# An accepted page whose SimHash is within this many bits (of 64) of a stored page's is
# not stored again (-1: off).
TOPIC_DUPLICATE_DISTANCE = 3
# Characters of text on each side of a link that count as its context.
TOPIC_CONTEXT_CHARS = 60
# A link in a block (p, li, td, div, nav, ...) whose link text exceeds this share of the
# block's text is navigation: its neighbours' text is not its context.
TOPIC_NOISE_LINK_RATIO = 0.25
# A relevant page whose link text exceeds this share of its text, less than half of that
# link text mentioning the topic, is a site's table of contents (a front page, a site
# index): its links are followed as a relevant page's, the page is not stored (1: off).
TOPIC_HUB_LINK_RATIO = 0.7
# A relevant page whose link text exceeds this share of its text, at least half of that link
# text mentioning the topic, is a list of the topic (a chapter's contents): the pages it lists
# are stored from TOPIC_LISTED_THRESHOLD (1: off).
TOPIC_LIST_LINK_RATIO = 0.5
# Navigation links' scores are multiplied by (1 - this).
TOPIC_NOISE_DISCOUNT = 0.0
# Only the first this many characters of a page's body are tokenized.
TOPIC_MAX_TEXT_CHARS = 20000
# Worker processes that parse, segment and score pages off the reactor thread (0: on it).
TOPIC_ANALYSIS_PROCESSES = 1
# Seconds a worker may take over one page before it is killed and the page fails (0: no limit).
TOPIC_ANALYSIS_TIMEOUT = 60.0
# Pages per download slot that may still be parsing while the slot downloads the next
# ones (0: a slot waits for every page's links before choosing its next request)...
TOPIC_PARSE_BACKLOG = 2
# ...once this many pages judged in a row sent no link ahead of the slot's best queued
# request, so that choosing without their links most likely chooses the same (0: at once).
TOPIC_PARSE_BACKLOG_AFTER = 20
# Stay on the seeds' sites (and the hosts seeds redirect to) unless this is False.
TOPIC_STAY_ON_SITE = True
# Links taken from one page (0: no limit): past it, those of the first ten times as many that
# say most of the topic, in document order (a link farm or a giant index stops there).
TOPIC_MAX_LINKS_PER_PAGE = 1000
# Pages downloaded per host (0: no cap); past it, its links are not followed and its
# queued requests are dropped.
TOPIC_MAX_PAGES_PER_HOST = 0
# Links the spider remembers sending (with their best score and lowest depth), so that a
# link found again is sent to the scheduler only if it scores higher or lies less deep;
# about 250 bytes each (0: every link found is sent).
TOPIC_SENT_LINKS = 100_000

# --- Storage ---------------------------------------------------------------
# Accepted pages are written here as raw bytes, with an index.jsonl beside them.
TOPIC_PAGES_DIR = "pages"

# --- scrapyd ----------------------------------------------------------------
# Under scrapyd (it passes the job id as the spider argument _job), each job stores its
# pages and index.jsonl in TOPIC_PAGES_DIR/<job id>, so jobs running at once never mix.
TOPIC_PAGES_PER_JOB = True

# --- MySQL -----------------------------------------------------------------
# mysql://user:password@host[:port]/database, or TOPICSPIDER_MYSQL_URL from the environment;
# empty: pages are stored on the filesystem only.
MYSQL_URL = os.environ.get("TOPICSPIDER_MYSQL_URL", "")
# Every row waits here until the database has it; what is left is written by the next crawl
# or by `scrapy mysql-replay`. One crawl at a time per folder; under scrapyd each job spools
# into MYSQL_SPOOL_DIR/<job id>.
MYSQL_SPOOL_DIR = "mysql-spool"
# Write a batch when this many rows (pages and links) are waiting...
MYSQL_BATCH_SIZE = 200
# ...or this many seconds after the last batch.
MYSQL_FLUSH_INTERVAL = 1.0
# Seconds before retrying a failed write; doubled after each failure, up to the maximum.
MYSQL_RETRY_DELAY = 1.0
MYSQL_RETRY_MAX_DELAY = 30.0
# Seconds the closing spider waits for the database to take what is left.
MYSQL_CLOSE_TIMEOUT = 10.0
# Seconds to connect (greeting and login included), and to wait for each read or write.
MYSQL_CONNECT_TIMEOUT = 5.0
MYSQL_TIMEOUT = 30.0
# Stored with every row; empty: scrapyd's job id, else "<spider>-<UTC start time>".
MYSQL_CRAWL_ID = ""

# --- Progress --------------------------------------------------------------
# Seconds between progress log lines (0 turns them off).
TOPIC_PROGRESS_INTERVAL = 30.0
# If set, a JSON-lines file of every scored page in fetch order (url, relevance, accepted, ...).
TOPIC_FETCH_LOG = ""
# If set, a folder that gets harvest.png, report.md and report.json when the crawl ends.
TOPIC_REPORT = ""

# --- Dedup and frontier memory ---------------------------------------------
# Duplicate filter: "exact" (Scrapy's set of fingerprints, about 130 bytes per URL)
# or "bloom" (about 1.8 bytes per URL at 0.1%; skips that share of new URLs). With
# REDIS_URL, the crawl's shared seen-set: a Redis set, or a Bloom filter in Redis bits.
TOPIC_DUPEFILTER = "exact"
# URLs the Bloom filter is sized for (17 MiB at 0.1%); past it false positives grow.
TOPIC_BLOOM_CAPACITY = 10_000_000
# Bloom filter false-positive rate: the expected share of new URLs skipped as seen.
TOPIC_BLOOM_ERROR_RATE = 0.001
# Requests the frontier keeps in memory (the best ones); the rest wait in a temporary
# SQLite file (SpillQueue). With JOBDIR the whole frontier is on disk anyway.
TOPIC_QUEUE_MEMORY_LIMIT = 50_000

# --- Download slots (local and Redis mode) ---------------------------------
# "host": one download slot per host (polite); "aphash": a host's URLs spread over TOPIC_SLOTS
# slots by the APHash of the URL, for more concurrency on one large site.
TOPIC_SLOT_POLICY = "host"
# Slots per host with TOPIC_SLOT_POLICY = "aphash".
TOPIC_SLOTS = 4

# --- Distributed crawling (Redis) --------------------------------------------
# A redis:// URL switches on the shared frontier; empty: a local crawl. TOPICSPIDER_REDIS_URL
# from the environment keeps its password out of scrapyd's log and of ps.
REDIS_URL = os.environ.get("TOPICSPIDER_REDIS_URL", "")
# Keyword arguments of the Redis client (redis-py); nothing is retried inside it.
REDIS_PARAMS = {"socket_timeout": 10, "socket_connect_timeout": 5}
# Name of the shared crawl (Redis keys topicspider:<id>:*); empty: the spider's name.
TOPIC_CRAWL_ID = ""
# Dupefilter of the shared crawl. The default builds the one TOPIC_DUPEFILTER names: the
# exact Redis set or a Bloom filter in Redis, both checked inside the frontier's script.
REDIS_DUPEFILTER_CLASS = "topicspider.redis.dupefilter.RedisTopicDupeFilter"
# Seconds a worker's requests stay leased without a heartbeat before going back to the frontier.
REDIS_LEASE = 60.0
# Seconds an idle worker waits for others' in-flight work before leaving (0: forever).
REDIS_IDLE_TIMEOUT = 180.0
# Seconds between polls of Redis while the worker has nothing to do.
REDIS_POLL_INTERVAL = 0.2
# Fingerprints this worker remembers sending (seen or added, either dupefilter), so
# rediscovered links are not sent to Redis again; about 150 bytes each.
REDIS_SEEN_CACHE = 100000
# Number of domain-hash partitions of the frontier (every worker of a crawl must agree).
TOPIC_PARTITIONS = 1
# Partitions this worker serves, e.g. "0,2"; empty: all of them.
TOPIC_WORKER_PARTITIONS = ""

# --- Scrapy components -----------------------------------------------------
SCHEDULER = "topicspider.scheduler.TopicScheduler"
SCHEDULER_PRIORITY_QUEUE = "topicspider.pqueues.ScorePriorityQueue"
SCHEDULER_MEMORY_QUEUE = "topicspider.pqueues.SpillQueue"
SCHEDULER_DISK_QUEUE = "topicspider.pqueues.DiskQueue"
DUPEFILTER_CLASS = "topicspider.dupefilters.TopicDupeFilter"

SPIDER_MIDDLEWARES = {
    "topicspider.slots.SlotPolicyMiddleware": 600,
}
DOWNLOADER_MIDDLEWARES = {
    # Between Scrapy's RobotsTxtMiddleware (100) and RetryMiddleware (550).
    "topicspider.robots.RobotsTxtFailureMiddleware": 150,
    # Before Scrapy's HttpCompressionMiddleware (590) sees the response.
    "topicspider.robots.RobotsTxtEncodingMiddleware": 595,
    # In Scrapy's place: a page that refreshes to itself is kept, not a redirect loop.
    "scrapy.downloadermiddlewares.redirect.MetaRefreshMiddleware": None,
    "topicspider.refresh.SelfRefreshMiddleware": 580,
    # After redirects and retries (a redirect's target is checked), before the HTTP cache
    # (a cached page counts); pages fetched at another address first, so they use none of a
    # host's cap.
    "topicspider.fetchedelsewhere.KnownCanonicalMiddleware": 875,
    "topicspider.siblings.SiblingDemotionMiddleware": 885,  # off with TOPIC_BARREN_SIBLINGS=0
    "topicspider.hostcap.HostPageCapMiddleware": 890,  # off without TOPIC_MAX_PAGES_PER_HOST
}

# Scrapy's, storing the items of the pages that wait for the threshold before they close.
ITEM_PROCESSOR = "topicspider.pipelines.ItemPipelines"
ITEM_PIPELINES = {
    "topicspider.pipelines.files.FilesystemPipeline": 300,
    # After the filesystem, which sets item.path; off without MYSQL_URL.
    "topicspider.pipelines.mysql.MySQLPipeline": 400,
}

EXTENSIONS = {
    # Scrapy's, without writing to a JOBDIR the crawl could not use (see jobstate.py).
    "scrapy.extensions.spiderstate.SpiderState": None,
    "topicspider.extensions.jobstate.JobState": 0,
    "topicspider.extensions.progress.Progress": 500,
    "topicspider.extensions.fetchlog.FetchLog": 510,
    "topicspider.extensions.report.Report": 520,
}

# --- Politeness and Scrapy defaults -----------------------------------------
# Who runs the crawl (an e-mail address or URL): goes into the User-Agent (see addon.py).
TOPIC_CONTACT = ""
ADDONS = {"topicspider.addon.TopicSpiderAddon": 0}
ROBOTSTXT_OBEY = True
# Obey robots <meta> tags and X-Robots-Tag headers for all robots or for BOT_NAME: a page
# marked noindex is not stored, the links of one marked nofollow are not followed.
TOPIC_OBEY_ROBOTS_META = True
CONCURRENT_REQUESTS = 16
# Per-host concurrency is low for politeness and for focus: requests are chosen when a
# slot has room, so fewer in flight means each choice sees more scored links.
CONCURRENT_REQUESTS_PER_DOMAIN = 2
# A page yields at most one item; Scrapy starts this many tasks per page to handle the
# page's output (its default, 100, costs 0.4-1.6 ms of CPU per page for nothing).
CONCURRENT_ITEMS = 16
DOWNLOAD_DELAY = 0
DEPTH_PRIORITY = 0
# Traps (endless calendars, ?page=N) end here at the latest; URLs longer than
# URLLENGTH_LIMIT (2083) are ignored; bodies above DOWNLOAD_MAXSIZE are not downloaded.
DEPTH_LIMIT = 50
DOWNLOAD_MAXSIZE = 16 * 1024 * 1024
DOWNLOAD_WARNSIZE = 4 * 1024 * 1024
LOG_LEVEL = "INFO"
# Scrapy's fingerprints with session ids left out, so that a page a redirect gave an id is
# not fetched once more through its links (see fingerprints.py).
REQUEST_FINGERPRINTER_CLASS = "topicspider.fingerprints.SessionlessFingerprinter"
FEED_EXPORT_ENCODING = "utf-8"
# What `-O pages.jsonl` exports of each stored page: not its raw bytes, which are in the
# pages folder at `path` (add `body` to get them base64-encoded).
FEED_EXPORT_FIELDS = [
    "url",
    "title",
    "relevance",
    "depth",
    "parent_url",
    "charset",
    "fetched_at",
    "path",
    "text",
]
