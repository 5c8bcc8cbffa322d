"""The report's text must not change: these pass before and after the refactoring."""

from report import Order, build_report

ORDERS = [
    Order("A1", "domestic", 2, 10.0),
    Order("A2", "domestic", 1, 99.5),
    Order("A3", "domestic", 3, 5.0, refunded=True),
    Order("B1", "international", 4, 12.25),
    Order("B2", "international", 1, 200.0, refunded=True),
]


def test_full_report():
    assert build_report(ORDERS, "2026-11") == (
        "Sales report for 2026-11\n"
        "\n"
        "Domestic\n"
        "  orders:           2\n"
        "  gross:       134.50\n"
        "  refunds:      15.00\n"
        "  net:         119.50\n"
        "  largest: A2 (99.50)\n"
        "\n"
        "International\n"
        "  orders:           1\n"
        "  gross:       249.00\n"
        "  refunds:     200.00\n"
        "  net:          49.00\n"
        "  largest: B1 (49.00)\n"
        "\n"
        "Total net: 168.50\n"
    )


def test_empty_month_has_no_largest_line():
    assert build_report([], "2026-12") == (
        "Sales report for 2026-12\n"
        "\n"
        "Domestic\n"
        "  orders:           0\n"
        "  gross:         0.00\n"
        "  refunds:       0.00\n"
        "  net:           0.00\n"
        "\n"
        "International\n"
        "  orders:           0\n"
        "  gross:         0.00\n"
        "  refunds:       0.00\n"
        "  net:           0.00\n"
        "\n"
        "Total net: 0.00\n"
    )


def test_refunded_orders_never_count_as_largest():
    report = build_report([Order("R1", "international", 1, 500.0, refunded=True)], "2026-10")
    assert "largest" not in report
    assert "  refunds:     500.00\n  net:           0.00\n" in report


def test_first_of_equal_orders_is_the_largest():
    orders = [Order("X1", "domestic", 1, 30.0), Order("X2", "domestic", 3, 10.0)]
    assert "  largest: X1 (30.00)\n" in build_report(orders, "2026-09")


def test_orders_of_other_regions_are_ignored():
    report = build_report([Order("Z1", "moon", 1, 1000.0)], "2026-08")
    assert report.endswith("Total net: 0.00\n")
