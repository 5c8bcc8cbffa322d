"""argparse value types shared by the subcommands: one message shape for every bad number."""

from __future__ import annotations

import argparse
from collections.abc import Callable


def whole_number(flag: str, minimum: int, hint: str) -> Callable[[str], int]:
    """An int >= minimum; else `FLAG 'text': HINT`."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = minimum - 1
        if value < minimum:
            raise argparse.ArgumentTypeError(f"{flag} {text!r}: {hint}")
        return value

    return parse


def open_fraction(flag: str, example: str) -> Callable[[str], float]:
    """A float strictly between 0 and 1; else `FLAG 'text': expected ... between 0 and 1, e.g. EXAMPLE`."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = 0.0
        if not 0 < value < 1:
            raise argparse.ArgumentTypeError(f"{flag} {text!r}: expected a number between 0 and 1, e.g. {example}")
        return value

    return parse
