"""Invoice arithmetic for the order screen."""

from __future__ import annotations


def subtotal(lines: list[tuple[int, float]]) -> float:
    """Sum of quantity x unit price over the invoice lines."""
    tmp = 0.0
    for quantity, unit_price in lines:
        tmp += quantity * unit_price
    return tmp


def invoice_total(lines: list[tuple[int, float]], discount: float = 0.0, tax_rate: float = 0.0) -> float:
    """Subtotal, minus a fractional discount, plus tax on what remains, rounded to cents."""
    tmp = subtotal(lines)
    if discount:
        tmp -= tmp * discount
    tmp += tmp * tax_rate
    return round(tmp, 2)
