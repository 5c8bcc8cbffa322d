"""Shipping quotes for the checkout page."""

from shipping.calculator import ShippingCalculator

__all__ = ["ShippingCalculator"]
