import pytest
from scrapy.settings import Settings

from topicspider import settings as defaults
from topicspider.exceptions import ConfigError
from topicspider.settingtypes import check_types

PROJECT = {name: value for name, value in vars(defaults).items() if name.isupper()}
TYPED = {
    name: value
    for name, value in PROJECT.items()
    if name.startswith(("TOPIC_", "MYSQL_", "REDIS_")) and isinstance(value, int | float)
}


def test_the_defaults_and_the_defaults_written_as_text_pass():
    assert len(TYPED) > 40
    check_types(Settings(PROJECT))
    check_types(Settings({**PROJECT, **{name: str(value) for name, value in TYPED.items()}}))
    check_types(Settings({**PROJECT, "TOPIC_ADAPTIVE": "0", "TOPIC_THRESHOLD": "1"}))


def test_scrapy_settings_pass_as_scrapy_reads_them():
    """Whole-number defaults Scrapy reads as a number or a truth value."""
    as_given = {
        "DOWNLOAD_DELAY": "0.5",
        "DOWNLOAD_TIMEOUT": "7.5",
        "DNS_TIMEOUT": "2.5",
        "TELNETCONSOLE_ENABLED": "False",
    }
    check_types(Settings({**PROJECT, **as_given, "CLOSESPIDER_PAGECOUNT": "50"}))


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        (
            "TOPIC_OBEY_ROBOTS_META",
            "maybe",
            "TOPIC_OBEY_ROBOTS_META='maybe': expected True or False",
        ),
        ("TOPIC_TUNNEL_DEPTH", "2.5", "TOPIC_TUNNEL_DEPTH='2.5': expected a whole number"),
        ("TOPIC_THRESHOLD", "high", "TOPIC_THRESHOLD='high': expected a finite number"),
        ("TOPIC_THRESHOLD", "nan", "TOPIC_THRESHOLD='nan': expected a finite number"),
        ("TOPIC_PROGRESS_INTERVAL", "inf", "TOPIC_PROGRESS_INTERVAL='inf': expected a finite"),
        ("TOPIC_THRESHOLD_TOP", "ten", "TOPIC_THRESHOLD_TOP='ten': expected a whole number"),
        ("MYSQL_BATCH_SIZE", "", "MYSQL_BATCH_SIZE='': expected a whole number"),
        ("REDIS_LEASE", "60s", "REDIS_LEASE='60s': expected a finite number"),
        ("CLOSESPIDER_PAGECOUNT", "abc", "CLOSESPIDER_PAGECOUNT='abc': expected a whole number"),
        # Scrapy reads these with getint: before, a traceback as the crawl opened
        ("CLOSESPIDER_PAGECOUNT", "2.5", "CLOSESPIDER_PAGECOUNT='2.5': expected a whole number"),
        ("URLLENGTH_LIMIT", "2.5", "URLLENGTH_LIMIT='2.5': expected a whole number"),
        ("DOWNLOAD_MAXSIZE", "16e6", "DOWNLOAD_MAXSIZE='16e6': expected a whole number"),
        ("DOWNLOAD_TIMEOUT", "30s", "DOWNLOAD_TIMEOUT='30s': expected a number"),
        ("ROBOTSTXT_OBEY", "maybe", "ROBOTSTXT_OBEY='maybe': expected True or False"),
    ],
)
def test_a_value_that_is_not_its_defaults_type_is_named(name, value, message):
    with pytest.raises(ConfigError) as error:
        check_types(Settings({**PROJECT, name: value}))
    assert str(error.value).startswith(message)


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        # "all cores", as joblib reads it: before, a traceback for every page
        ("TOPIC_ANALYSIS_PROCESSES", "-1", "TOPIC_ANALYSIS_PROCESSES='-1': expected a whole "),
        # before, each page's last five links were dropped without a word
        ("TOPIC_MAX_LINKS_PER_PAGE", "-5", "TOPIC_MAX_LINKS_PER_PAGE='-5': expected a whole "),
        ("TOPIC_MAX_PAGES_PER_HOST", "-1", "TOPIC_MAX_PAGES_PER_HOST='-1': expected a whole "),
        # before, tracebacks as the crawl opened
        ("TOPIC_QUEUE_MEMORY_LIMIT", "0", "TOPIC_QUEUE_MEMORY_LIMIT='0': expected a whole "),
        ("TOPIC_BLOOM_CAPACITY", "-5", "TOPIC_BLOOM_CAPACITY='-5': expected a whole "),
        # before, no text was read: every page a near-duplicate of the first, not stored
        ("TOPIC_MAX_TEXT_CHARS", "0", "TOPIC_MAX_TEXT_CHARS='0': expected a whole number >= 1"),
        ("TOPIC_DUPLICATE_DISTANCE", "99", "TOPIC_DUPLICATE_DISTANCE='99': expected a whole "),
        ("TOPIC_DUPLICATE_DISTANCE", "-2", "TOPIC_DUPLICATE_DISTANCE='-2': expected a whole "),
        # before, OverflowError as the crawl opened
        ("TOPIC_THRESHOLD_TOP", str(10**20), "TOPIC_THRESHOLD_TOP='1000000000000000"),
        ("TOPIC_BLOOM_CAPACITY", str(10**20), "TOPIC_BLOOM_CAPACITY='1000000000000000"),
        ("TOPIC_PARTITIONS", str(10**20), "TOPIC_PARTITIONS='1000000000000000"),
    ],
)
def test_a_whole_number_out_of_its_range_is_named(name, value, message):
    with pytest.raises(ConfigError) as error:
        check_types(Settings({**PROJECT, name: value}))
    assert str(error.value).startswith(message)
    assert str(error.value).endswith(
        (
            "number >= 0",
            "number >= 1",
            "number from -1 to 15",
            "number from 1 to 1000000",
            "number from 1 to 10000000000",
            "number from 1 to 10000",
        )
    )


@pytest.mark.parametrize(
    ("name", "value", "expected"),
    [
        ("TOPIC_NOISE_DISCOUNT", "2.5", "from 0 to 1"),  # before, a traceback
        ("TOPIC_NOISE_DISCOUNT", "-1", "from 0 to 1"),
        ("TOPIC_HUB_LINK_RATIO", "-1", "from 0 to 1"),  # before, no page was stored
        ("TOPIC_NOISE_LINK_RATIO", "1.5", "from 0 to 1"),
        ("TOPIC_THRESHOLD", "5", "from 0 to 1"),  # before, nothing was stored, without a word
        ("TOPIC_THRESHOLD", "-1", "from 0 to 1"),  # before, everything was
        ("TOPIC_THRESHOLD_MIN", "-0.1", "from 0 to 1"),
        ("TOPIC_BLOOM_ERROR_RATE", "0", "between 0 and 1"),  # before, a traceback
        ("TOPIC_BLOOM_ERROR_RATE", "1.5", "between 0 and 1"),
    ],
)
def test_a_share_out_of_its_range_is_named(name, value, expected):
    with pytest.raises(ConfigError) as error:
        check_types(Settings({**PROJECT, name: value}))
    assert str(error.value) == f"{name}={value!r}: expected a number {expected}"


def test_the_ends_of_the_ranges_pass():
    ends = {"TOPIC_DUPLICATE_DISTANCE": "-1", "TOPIC_ANALYSIS_PROCESSES": "0"}
    check_types(Settings({**PROJECT, **ends, "TOPIC_QUEUE_MEMORY_LIMIT": "1"}))
    check_types(Settings({**PROJECT, "TOPIC_DUPLICATE_DISTANCE": "15"}))
    shares = {"TOPIC_HUB_LINK_RATIO": "1", "TOPIC_NOISE_LINK_RATIO": "0"}
    check_types(Settings({**PROJECT, **shares, "TOPIC_NOISE_DISCOUNT": "1"}))
    check_types(Settings({**PROJECT, "TOPIC_THRESHOLD_TOP": str(10**6)}))


@pytest.mark.parametrize("contact", ["张三@例子.中国", "me@example.org\r\nX-Forwarded-For: 1"])
def test_a_contact_the_user_agent_cannot_carry_is_named(contact):
    """Before, the crawl sent UTF-8 bytes in its User-Agent, and a line break let the
    value add a header."""
    with pytest.raises(ConfigError) as error:
        check_types(Settings({**PROJECT, "TOPIC_CONTACT": contact}))
    assert str(error.value).startswith(f"TOPIC_CONTACT={contact!r}: expected printable ASCII")
    check_types(Settings({**PROJECT, "TOPIC_CONTACT": "mailto:crawl@example.org"}))


@pytest.mark.parametrize(
    ("name", "value", "expected"),
    [
        ("REDIS_LEASE", "0", "above 0"),  # before, tracebacks once the worker had joined
        ("REDIS_POLL_INTERVAL", "-1", "above 0"),
        ("REDIS_IDLE_TIMEOUT", "-1", ">= 0"),  # before, a joining worker left at once
        ("TOPIC_PROGRESS_INTERVAL", "-1", ">= 0"),  # before, no progress line, no summary
        ("TOPIC_ANALYSIS_TIMEOUT", "-1", ">= 0"),
        # Scrapy's: before, each request failed with a traceback, and `scrapy keywords`
        # could fetch nothing with a timeout of 0.
        ("DOWNLOAD_TIMEOUT", "0", "above 0"),
        ("DOWNLOAD_TIMEOUT", "nan", "above 0"),
        ("DOWNLOAD_TIMEOUT", "-1", "above 0"),
        ("DOWNLOAD_MAXSIZE", "-1", ">= 0"),
        ("DOWNLOAD_WARNSIZE", "-1", ">= 0"),
        ("DOWNLOAD_DELAY", "-2", ">= 0"),
    ],
)
def test_an_interval_out_of_its_range_is_named(name, value, expected):
    with pytest.raises(ConfigError) as error:
        check_types(Settings({**PROJECT, name: value}))
    assert str(error.value) == f"{name}={value!r}: expected a number {expected}"
    check_types(Settings({**PROJECT, "TOPIC_PROGRESS_INTERVAL": "0"}))
