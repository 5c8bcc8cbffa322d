"""Behaviour that must not change: the same quotes, errors and cheapest carrier as before."""

import pytest

from shipping import ShippingCalculator

QUOTES = [
    # (weight_kg, distance_km, express): {carrier: price}; None = the carrier refuses the parcel
    ((1, 50, False), {"ups": 6.7, "fedex": 8.1, "dhl": 9.9, "usps": 4.3}),
    ((2, 100, True), {"ups": 12.6, "fedex": 21.7, "dhl": 12.87, "usps": None}),
    ((5, 1200, False), {"ups": 23.0, "fedex": 25.9, "dhl": 27.4, "usps": 17.1}),
    ((12, 1500, True), {"ups": 51.6, "fedex": 48.5, "dhl": 39.52, "usps": None}),
    ((35, 300, False), {"ups": 50.0, "fedex": 45.1, "dhl": 57.4, "usps": 61.9}),
    ((0.5, 0, False), {"ups": 5.6, "fedex": 7.0, "dhl": 9.9, "usps": 3.45}),
]


@pytest.mark.parametrize(
    ("carrier", "args", "expected"),
    [
        pytest.param(carrier, args, price, id=f"{carrier}-{args[0]}kg-{args[1]}km{'-express' if args[2] else ''}")
        for args, prices in QUOTES
        for carrier, price in prices.items()
        if price is not None
    ],
)
def test_quote(carrier, args, expected):
    assert ShippingCalculator().quote(carrier, *args) == expected


def test_carrier_names_are_case_insensitive():
    assert ShippingCalculator().quote("FedEx", 1, 50) == 8.1


def test_usps_has_no_express_service():
    with pytest.raises(ValueError, match="usps has no express service"):
        ShippingCalculator().quote("usps", 1, 10, express=True)


def test_unknown_carrier_names_the_known_ones():
    with pytest.raises(ValueError, match=r"^unknown carrier 'pigeon'; known: dhl, fedex, ups, usps$"):
        ShippingCalculator().quote("Pigeon", 1, 10)


@pytest.mark.parametrize(
    ("weight_kg", "distance_km", "message"),
    [
        pytest.param(0, 10, "weight_kg must be positive, got 0", id="zero-weight"),
        pytest.param(1, -1, "distance_km must not be negative, got -1", id="negative-distance"),
    ],
)
def test_bad_parcels_are_refused(weight_kg, distance_km, message):
    with pytest.raises(ValueError, match=message):
        ShippingCalculator().quote("ups", weight_kg, distance_km)


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        pytest.param((1, 50, False), ("usps", 4.3), id="light"),
        pytest.param((2, 100, True), ("ups", 12.6), id="express-skips-usps"),
        pytest.param((12, 1500, True), ("dhl", 39.52), id="heavy-express"),
        pytest.param((35, 300, False), ("fedex", 45.1), id="oversize"),
    ],
)
def test_cheapest(args, expected):
    assert ShippingCalculator().cheapest(*args) == expected
