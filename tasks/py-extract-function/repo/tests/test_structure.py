"""The refactoring itself: one helper, `summarize_region`, called once per region from build_report."""

import ast
from pathlib import Path

import pytest

import report
from report import Order

SOURCE = Path(__file__).resolve().parent.parent / "report.py"


def _module() -> ast.Module:
    return ast.parse(SOURCE.read_text(encoding="utf-8"))


def _function(name: str) -> ast.FunctionDef:
    for node in _module().body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return node
    pytest.fail(f"report.py has no module-level function {name}()")


def test_helper_is_a_module_level_function_taking_title_and_orders():
    helper = _function("summarize_region")
    assert [arg.arg for arg in helper.args.args] == ["title", "orders"]


def test_helper_returns_the_section_lines_and_the_net_total():
    summarize_region = getattr(report, "summarize_region", None)
    assert callable(summarize_region), "report.summarize_region is missing"
    orders = [Order("A1", "domestic", 2, 10.0), Order("A2", "domestic", 1, 5.0, refunded=True)]
    assert summarize_region("Domestic", orders) == (
        [
            "Domestic",
            "  orders:           1",
            "  gross:        25.00",
            "  refunds:       5.00",
            "  net:          20.00",
            "  largest: A1 (20.00)",
            "",
        ],
        20.0,
    )


def test_build_report_calls_the_helper_twice():
    calls = [
        node
        for node in ast.walk(_function("build_report"))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "summarize_region"
    ]
    assert len(calls) == 2


def test_build_report_has_no_loop_of_its_own():
    loops = [node for node in ast.walk(_function("build_report")) if isinstance(node, (ast.For, ast.While))]
    assert loops == []


def test_the_section_layout_is_written_once():
    labels = [
        node
        for node in ast.walk(_module())
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and "refunds:" in node.value
    ]
    assert len(labels) == 1
