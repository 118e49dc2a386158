"""On-line page importance computation (OPIC, Abiteboul et al. 2003).

Every page starts with one unit of cash; a fetched page hands its cash out in
equal shares to the pages it links to. A page's accumulated cash estimates its
importance in the link graph without ever computing PageRank over it.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["Opic"]


class Opic:
    """Cash per URL; ``importance`` maps it into [0, 1) for the link score."""

    def __init__(self) -> None:
        self.cash: dict[str, float] = {}

    def distribute(self, url: str, links: Sequence[str]) -> None:
        """The page at ``url`` was fetched: share its cash among ``links``."""
        cash = self.cash.pop(url, 1.0)
        if not links:
            return
        share = cash / len(links)
        for link in links:
            self.cash[link] = self.cash.get(link, 1.0) + share

    def importance(self, url: str) -> float:
        cash = self.cash.get(url, 1.0)
        return cash / (cash + 1.0)
