"""Price a parcel with each of the carriers we ship with."""

from __future__ import annotations


class ShippingCalculator:
    """Quote the price of shipping a parcel, in euros rounded to cents."""

    def quote(self, carrier: str, weight_kg: float, distance_km: float, express: bool = False) -> float:
        """The price of shipping `weight_kg` over `distance_km` with `carrier` (case-insensitive)."""
        if weight_kg <= 0:
            raise ValueError(f"weight_kg must be positive, got {weight_kg}")
        if distance_km < 0:
            raise ValueError(f"distance_km must not be negative, got {distance_km}")
        carrier = carrier.lower()
        if carrier == "ups":
            price = 5.0 + 1.2 * weight_kg + 0.01 * distance_km
            if express:
                price *= 1.5
        elif carrier == "fedex":
            price = 6.5 + 1.0 * weight_kg + 0.012 * distance_km
            if express:
                price += 12.0
        elif carrier == "dhl":
            # Flat bands by weight, a surcharge for long distances.
            if weight_kg <= 2:
                price = 9.9
            elif weight_kg <= 10:
                price = 19.9
            else:
                price = 19.9 + 1.5 * (weight_kg - 10)
            if distance_km > 1000:
                price += 7.5
            if express:
                price *= 1.3
        elif carrier == "usps":
            if express:
                raise ValueError("usps has no express service")
            price = 3.0 + 0.9 * weight_kg + 0.008 * distance_km
            if weight_kg > 30:
                price += 25.0  # oversize fee
        else:
            raise ValueError(f"unknown carrier {carrier!r}; known: dhl, fedex, ups, usps")
        return round(price, 2)

    def cheapest(self, weight_kg: float, distance_km: float, express: bool = False) -> tuple[str, float]:
        """The carrier with the lowest quote and that quote; ties go to the first name in alphabetical order.

        Carriers that cannot take the parcel (e.g. no express service) are skipped.
        """
        best: tuple[str, float] | None = None
        for name in ("dhl", "fedex", "ups", "usps"):
            try:
                price = self.quote(name, weight_kg, distance_km, express)
            except ValueError:
                continue
            if best is None or price < best[1]:
                best = (name, price)
        if best is None:
            raise ValueError("no carrier can ship this parcel")
        return best
