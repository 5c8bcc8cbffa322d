import ast
from pathlib import Path

import pytest

import invoice

SOURCE = Path(__file__).resolve().parent.parent / "invoice.py"


def _names() -> set[str]:
    """Every variable and argument name used in invoice.py."""
    tree = ast.parse(SOURCE.read_text(encoding="utf-8"))
    names = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
    return names | {node.arg for node in ast.walk(tree) if isinstance(node, ast.arg)}


@pytest.mark.parametrize(
    ("lines", "discount", "tax_rate", "expected"),
    [
        pytest.param([], 0.0, 0.0, 0.0, id="empty"),
        pytest.param([(2, 3.5), (1, 10.0)], 0.0, 0.0, 17.0, id="plain"),
        pytest.param([(4, 25.0)], 0.1, 0.0, 90.0, id="discount"),
        pytest.param([(1, 100.0)], 0.0, 0.2, 120.0, id="tax"),
        pytest.param([(3, 9.99)], 0.15, 0.08, 27.51, id="discount-and-tax"),
    ],
)
def test_invoice_total_unchanged(lines, discount, tax_rate, expected):
    assert invoice.invoice_total(lines, discount=discount, tax_rate=tax_rate) == expected


def test_subtotal_unchanged():
    assert invoice.subtotal([(2, 1.25), (3, 2.0)]) == 8.5


def test_old_name_is_gone():
    assert "tmp" not in _names()


def test_new_name_is_used():
    assert "running_total" in _names()
