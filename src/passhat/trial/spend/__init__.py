"""What one trial may spend of the team's model API: the caps and the request shape the model proxy enforces.

May import: nothing of passhat's (the proxy, trial/_proxy.py, calls it).
Exports: Spend (a trial's caps and running totals: admit a request, meter its response), Meter, api_of,
PRICES, Price, price, listed_price and cost_usd (list prices: the one price list of passhat).
"""

from __future__ import annotations

from passhat.trial.spend._caps import PRICES, Meter, Price, Spend, api_of, cost_usd, listed_price, price

__all__ = ["PRICES", "Meter", "Price", "Spend", "api_of", "cost_usd", "listed_price", "price"]
