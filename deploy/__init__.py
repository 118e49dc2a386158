"""Running topicspider under scrapyd, for development and tests; not part of the egg."""
