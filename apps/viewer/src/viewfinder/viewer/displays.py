"""Which X displays the live view may show: only those the command line named.

``viewfinder view --live :N`` (repeatable) is the one permission. A recording or a
desktop run names the display it was made on (``metadata.json``), and its page offers a
"watch :N live" link, but a file under PATH never decides what is streamed: someone
else's recording that names ``:0`` must not expose the user's desktop. Any display not
given is refused, whatever a page or an artifact asks for.
"""

from __future__ import annotations

from viewfinder.xvfb.registry import parse_display_number
from viewfinder.xvfb.sockets import display_listening


def display_alive(name: str) -> bool:
    """Whether an X server listens on local display ``name`` (``":N"``) now."""
    try:
        number = parse_display_number(name)
    except ValueError:
        return False
    return display_listening(number)


def normalise(name: str) -> str:
    """``"3"``, ``":3"``, ``":3.0"`` -> ``":3"``; ``ValueError`` for anything else."""
    return f":{parse_display_number(name)}"


class LiveDisplays:
    """The displays the live view may show: ``given`` on the command line, nothing else."""

    def __init__(self, given: tuple[str, ...]) -> None:
        self.given = tuple(dict.fromkeys(normalise(name) for name in given))

    def available(self) -> list[dict[str, object]]:
        """Every display given, with whether it runs now."""
        return [
            {"name": name, "source": "--live", "alive": display_alive(name)} for name in self.given
        ]

    def allowed(self, name: str) -> str | None:
        """``name`` normalised when the live view may show it, else None."""
        try:
            shown = normalise(name)
        except ValueError:
            return None
        return shown if shown in self.given else None
