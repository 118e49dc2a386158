"""Settings that depend on other settings, applied once the command line is known."""

from __future__ import annotations

from typing import TYPE_CHECKING

from topicspider import __version__

if TYPE_CHECKING:
    from scrapy.settings import BaseSettings


class TopicSpiderAddon:
    """Scrapy add-on (``ADDONS``): a User-Agent that names the project and its operator.

    ``TOPIC_CONTACT`` (an e-mail address or URL) goes into the User-Agent so site
    owners can reach whoever runs the crawl; a ``USER_AGENT`` given on the command
    line or in a settings module still wins.
    """

    def update_settings(self, settings: BaseSettings) -> None:
        contact = settings.get("TOPIC_CONTACT") or "no contact given"
        user_agent = f"topicspider/{__version__} (focused crawler; +{contact})"
        settings.set("USER_AGENT", user_agent, priority="addon")
