"""Monthly sales report for the shop's back office."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Order:
    id: str
    region: str  # "domestic" or "international"
    quantity: int
    unit_price: float
    refunded: bool = False


def build_report(orders: list[Order], month: str) -> str:
    """Plain-text report: one section per region, then the grand total."""
    lines = [f"Sales report for {month}", ""]
    domestic = [order for order in orders if order.region == "domestic"]
    international = [order for order in orders if order.region == "international"]

    # Domestic orders
    lines.append("Domestic")
    count = 0
    gross = 0.0
    refunds = 0.0
    largest = None
    for order in domestic:
        amount = order.quantity * order.unit_price
        gross += amount
        if order.refunded:
            refunds += amount
            continue
        count += 1
        if largest is None or amount > largest[1]:
            largest = (order.id, amount)
    net = round(gross - refunds, 2)
    lines.append(f"  orders:  {count:>10}")
    lines.append(f"  gross:   {gross:>10.2f}")
    lines.append(f"  refunds: {refunds:>10.2f}")
    lines.append(f"  net:     {net:>10.2f}")
    if largest is not None:
        lines.append(f"  largest: {largest[0]} ({largest[1]:.2f})")
    lines.append("")
    domestic_net = net

    # International orders
    lines.append("International")
    count = 0
    gross = 0.0
    refunds = 0.0
    largest = None
    for order in international:
        amount = order.quantity * order.unit_price
        gross += amount
        if order.refunded:
            refunds += amount
            continue
        count += 1
        if largest is None or amount > largest[1]:
            largest = (order.id, amount)
    net = round(gross - refunds, 2)
    lines.append(f"  orders:  {count:>10}")
    lines.append(f"  gross:   {gross:>10.2f}")
    lines.append(f"  refunds: {refunds:>10.2f}")
    lines.append(f"  net:     {net:>10.2f}")
    if largest is not None:
        lines.append(f"  largest: {largest[0]} ({largest[1]:.2f})")
    lines.append("")
    international_net = net

    lines.append(f"Total net: {domestic_net + international_net:.2f}")
    return "\n".join(lines) + "\n"
