"""The Strategy pattern: an abstract Carrier, one class per carrier, a registry the calculator delegates to."""

import ast
import importlib
import inspect
from pathlib import Path

import pytest

from shipping import ShippingCalculator

CALCULATOR = Path(__file__).resolve().parent.parent / "shipping" / "calculator.py"
CLASSES = {"ups": "UpsCarrier", "fedex": "FedexCarrier", "dhl": "DhlCarrier", "usps": "UspsCarrier"}


def _carriers():
    try:
        return importlib.import_module("shipping.carriers")
    except ImportError as error:
        pytest.fail(f"shipping.carriers cannot be imported: {error}")


def _pigeon_class(carriers):
    class PigeonCarrier(carriers.Carrier):
        name = "pigeon"

        def price(self, weight_kg, distance_km, express):
            return 1.234 + (1 if express else 0)

    return PigeonCarrier


def test_carrier_is_an_abstract_base_class_with_an_abstract_price():
    Carrier = _carriers().Carrier
    assert inspect.isabstract(Carrier)
    assert "price" in Carrier.__abstractmethods__
    assert list(inspect.signature(Carrier.price).parameters) == ["self", "weight_kg", "distance_km", "express"]


@pytest.mark.parametrize(("name", "class_name"), CLASSES.items())
def test_one_concrete_class_per_carrier(name, class_name):
    carriers = _carriers()
    cls = getattr(carriers, class_name, None)
    assert inspect.isclass(cls), f"shipping.carriers has no class {class_name}"
    assert issubclass(cls, carriers.Carrier) and not inspect.isabstract(cls)
    assert cls.name == name


def test_the_registry_holds_one_instance_of_each_carrier():
    carriers = _carriers()
    assert sorted(carriers.CARRIERS) == sorted(CLASSES)
    for name, class_name in CLASSES.items():
        assert type(carriers.CARRIERS[name]) is getattr(carriers, class_name)


def test_each_carrier_prices_a_parcel_on_its_own():
    carriers = _carriers()
    assert round(carriers.CARRIERS["ups"].price(2, 100, False), 2) == 8.4
    assert round(carriers.DhlCarrier().price(12, 1500, True), 2) == 39.52
    with pytest.raises(ValueError, match="usps has no express service"):
        carriers.UspsCarrier().price(1, 10, True)


def test_calculator_names_no_carrier():
    strings = {
        node.value
        for node in ast.walk(ast.parse(CALCULATOR.read_text(encoding="utf-8")))
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    }
    assert strings.isdisjoint(CLASSES), f"calculator.py still names carriers: {sorted(strings & set(CLASSES))}"


def test_a_new_carrier_needs_no_change_to_the_calculator():
    pigeon = _pigeon_class(_carriers())()
    calculator = ShippingCalculator(carriers={"pigeon": pigeon})
    assert calculator.quote("Pigeon", 1, 10) == 1.23
    assert calculator.quote("pigeon", 1, 10, express=True) == 2.23
    assert calculator.cheapest(1, 10) == ("pigeon", 1.23)
    with pytest.raises(ValueError, match=r"^unknown carrier 'ups'; known: pigeon$"):
        calculator.quote("ups", 1, 10)


def test_register_carrier_adds_to_the_default_registry():
    carriers = _carriers()
    pigeon = _pigeon_class(carriers)()
    carriers.register_carrier(pigeon)
    try:
        assert carriers.CARRIERS["pigeon"] is pigeon
        assert ShippingCalculator().quote("pigeon", 1, 10) == 1.23
        assert ShippingCalculator().cheapest(1, 10) == ("pigeon", 1.23)
    finally:
        carriers.CARRIERS.pop("pigeon", None)


def test_the_package_exports_the_pattern():
    import shipping

    carriers = _carriers()
    assert shipping.Carrier is carriers.Carrier
    assert shipping.CARRIERS is carriers.CARRIERS
    assert shipping.register_carrier is carriers.register_carrier
