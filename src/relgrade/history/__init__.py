"""Quality over time: reports of successive builds lined up, and the self-contained trend page."""

from relgrade.history._page import render_page
from relgrade.history._series import History, Point, history, recorded

__all__ = ["History", "Point", "history", "recorded", "render_page"]
