import pytest

from stats_utils import median


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        pytest.param([7], 7, id="one"),
        pytest.param([3, 1, 2], 2, id="odd"),
        pytest.param([5, 1, 4, 2, 3], 3, id="odd-unsorted"),
    ],
)
def test_median(values, expected):
    assert median(values) == expected


def test_median_does_not_mutate_input():
    values = [3, 1, 2]
    median(values)
    assert values == [3, 1, 2]


def test_median_of_nothing_raises():
    with pytest.raises(ValueError, match="empty"):
        median([])
