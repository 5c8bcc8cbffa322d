"""What one trial may spend of the team's model API: the caps and the request shape the model proxy enforces, and
how the proxy reads a reply (decoded as it is coded, parsed into events) to meter it and to tell how it ended.

May import: nothing of passhat's (the proxy, trial/_proxy.py, calls it).
Exports: Spend (a trial's caps and running totals: admit a request, meter its response), Meter, api_of;
Reading (one reply as the proxy forwards it: usage charged, outcome), accepted (the accept-encoding passhat
sends upstream), Decoder, UnreadableError, DECODABLE, error_outcome, FAILED_WORDS; PRICES, Price, price,
listed_price, cost_usd, billed_tokens, read_usage, USAGE_FIELDS (list prices: the one price list of passhat).
"""

from __future__ import annotations

from passhat.trial.spend._caps import Meter, Spend, api_of
from passhat.trial.spend._events import FAILED_WORDS, error_outcome
from passhat.trial.spend._prices import (
    PRICES,
    USAGE_FIELDS,
    Price,
    billed_tokens,
    cost_usd,
    listed_price,
    price,
    read_usage,
)
from passhat.trial.spend._reading import Reading
from passhat.trial.spend._wire import DECODABLE, Decoder, UnreadableError, accepted

__all__ = [
    "DECODABLE",
    "FAILED_WORDS",
    "PRICES",
    "USAGE_FIELDS",
    "Decoder",
    "Meter",
    "Price",
    "Reading",
    "Spend",
    "UnreadableError",
    "accepted",
    "api_of",
    "billed_tokens",
    "cost_usd",
    "error_outcome",
    "listed_price",
    "price",
    "read_usage",
]
