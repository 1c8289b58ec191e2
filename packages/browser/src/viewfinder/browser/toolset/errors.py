"""The errors a member call reports as an ``is_error`` result."""

from __future__ import annotations

from viewfinder.browser.errors import BrowserError


class MemberError(BrowserError):
    """A member could not do what was asked; ``field`` names the input at fault."""

    def __init__(self, field: str | None, message: str) -> None:
        self.field = field
        super().__init__(f"{field}: {message}" if field else message)
