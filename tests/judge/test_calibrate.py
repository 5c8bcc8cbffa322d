"""`passhat calibrate LABELS.csv`: judge vs human agreement, checked against hand arithmetic and scipy."""

from __future__ import annotations

import json
import random
import re

import pytest
from scipy.stats import spearmanr

from passhat.cli import main
from passhat.judge._agreement import (
    cohen_kappa,
    pooled_sd,
    precision_recall_f1,
    ranks,
    sign_test_p,
    spearman_rho,
)

LABELS = """\
trial,criterion,human,judge,note
t1,correctness,1,1,
t2,correctness,2,3,judge generous
t3,correctness,3,3,
t4,correctness,4,5,
t5,correctness,5,5,
t1,pass,fail,fail,
t2,pass,fail,pass,
t3,pass,pass,pass,
t4,pass,pass,pass,
t5,pass,pass,fail,
"""
HUMAN, JUDGE = [1, 2, 3, 4, 5], [1, 3, 3, 5, 5]


def test_quadratic_weighted_kappa_by_hand():
    # K = 5, weights (i-j)^2/16. Observed: two items one apart: 2 x 1/16 = 0.125.
    # Marginals: human 1 each of 1..5; judge 1:1, 3:2, 5:2. Expected = sum_ij w_ij r_i c_j / n:
    #   human 1: (0 + 4x2 + 16x2)/16 = 40/16; 2: (1 + 1x2 + 9x2)/16 = 21/16; 3: (4 + 0 + 4x2)/16 = 12/16;
    #   4: (9 + 1x2 + 1x2)/16 = 13/16; 5: (16 + 4x2 + 0)/16 = 24/16; sum 110/16, / 5 = 1.375
    # kappa = 1 - 0.125 / 1.375 = 1 - 1/11 = 10/11
    assert cohen_kappa(HUMAN, JUDGE, range(1, 6), "quadratic") == pytest.approx(10 / 11)


def test_linear_weighted_kappa_by_hand():
    # weights |i-j|/4. Observed 2 x 1/4 = 0.5. Expected: human 1: (0 + 2x2 + 4x2)/4 = 3; 2: (1 + 1x2 + 3x2)/4 = 2.25;
    # 3: (2 + 0 + 2x2)/4 = 1.5; 4: (3 + 1x2 + 1x2)/4 = 1.75; 5: (4 + 2x2 + 0)/4 = 2; sum 10.5, / 5 = 2.1
    # kappa = 1 - 0.5/2.1 = 1 - 5/21 = 16/21
    assert cohen_kappa(HUMAN, JUDGE, range(1, 6), "linear") == pytest.approx(16 / 21)


def test_unweighted_kappa_by_hand():
    # verdicts human F F T T T, judge F T T T F: observed agreement 3/5 = 0.6;
    # chance = (3/5)(3/5) + (2/5)(2/5) = 0.52; kappa = (0.6 - 0.52) / (1 - 0.52) = 0.08/0.48 = 1/6
    assert cohen_kappa([0, 0, 1, 1, 1], [0, 1, 1, 1, 0], (0, 1), "none") == pytest.approx(1 / 6)


def test_kappa_undefined_and_perfect():
    assert cohen_kappa([3, 3], [3, 3], range(1, 6)) is None  # chance agreement is total
    assert cohen_kappa([1, 5], [1, 5], range(1, 6)) == 1.0
    with pytest.raises(ValueError, match=r"ratings \[7\] are not among the categories"):
        cohen_kappa([1], [7], range(1, 6))


def test_spearman_by_hand_and_against_scipy():
    # ranks: human 1..5; judge [1, 3, 3, 5, 5] → [1, 2.5, 2.5, 4.5, 4.5]; deviations from 3: x -2,-1,0,1,2,
    # y -2,-0.5,-0.5,1.5,1.5; sxy = 4+0.5+0+1.5+3 = 9, sxx = 10, syy = 4+0.25+0.25+2.25+2.25 = 9
    # rho = 9 / sqrt(90) = 0.9487
    assert ranks(JUDGE) == [1, 2.5, 2.5, 4.5, 4.5]
    assert spearman_rho(HUMAN, JUDGE) == pytest.approx(9 / 90**0.5)
    rng = random.Random(7)
    for _ in range(20):
        x = [rng.randint(1, 5) for _ in range(12)]
        y = [rng.randint(1, 5) for _ in range(12)]
        ours = spearman_rho(x, y)
        if ours is not None:
            assert ours == pytest.approx(spearmanr(x, y).statistic)
    assert spearman_rho([1, 2, 3], [4, 4, 4]) is None  # a constant rater: undefined, not 0


def test_precision_recall_f1_by_hand():
    # TP 2 (t3, t4), FP 1 (t2), FN 1 (t5), TN 1 (t1): precision 2/3, recall 2/3, F1 2/3, accuracy 3/5
    got = precision_recall_f1([False, False, True, True, True], [False, True, True, True, False])
    assert got == {"tp": 2, "fp": 1, "fn": 1, "tn": 1, "precision": pytest.approx(2 / 3), "recall": pytest.approx(2 / 3),
                   "f1": pytest.approx(2 / 3), "accuracy": pytest.approx(0.6)}  # fmt: skip
    assert precision_recall_f1([True], [False])["precision"] is None  # the judge passed nothing


@pytest.mark.parametrize(
    ("truth", "said", "f1"),
    [
        # TP 0, FN 1: precision undefined (the judge passed nothing), recall 0 -> F1 = 2*0 / (0 + 0 + 1) = 0.
        pytest.param([True], [False], 0.0, id="judge-passes-nothing"),
        # TP 0, FP 1: precision 0, recall undefined (no human pass) -> F1 = 0 / (0 + 1 + 0) = 0.
        pytest.param([False], [True], 0.0, id="no-human-pass"),
        # TP 0, FP 1, FN 1: precision 0, recall 0 -> 0.
        pytest.param([True, False], [False, True], 0.0, id="all-wrong"),
        # TN only: no positive on either side, F1 undefined.
        pytest.param([False, False], [False, False], None, id="no-positive"),
    ],
)
def test_f1_is_zero_without_a_true_positive(truth: list[bool], said: list[bool], f1: float | None) -> None:
    # scikit-learn's f1_score is 2 TP / (2 TP + FP + FN), 0 in these cases (its zero_division only applies when
    # the denominator is 0, the last case).
    assert precision_recall_f1(truth, said)["f1"] == f1


def test_sign_test_and_pooled_sd():
    # 5 of 5 one way: 2 x (1/2)^5 = 0.0625; 4 vs 1: 2 x (1 + 5)/32 = 0.375
    assert sign_test_p(5, 0) == pytest.approx(0.0625) and sign_test_p(4, 1) == pytest.approx(0.375)
    assert sign_test_p(0, 0) is None
    # variances: [4, 5] → 0.5, [3, 3] → 0, [2] left out: sqrt((0.5 + 0) / 2) = 0.5
    assert pooled_sd([[4, 5], [3, 3], [2]]) == pytest.approx(0.5)


def test_calibrate_cli_table(tmp_path, capsys):
    labels = tmp_path / "labels.csv"
    labels.write_text(LABELS)
    assert main(["calibrate", str(labels)]) == 0
    out = capsys.readouterr().out
    assert "correctness  5              0.909     0.949        +0.40       2      0   0.500" in out
    assert "kappa: Cohen's, quadratic weights (i-j)^2/(K-1)^2" in out
    assert (
        "Pass verdict (n=5, pass = positive): precision 0.667, recall 0.667, F1 0.667, accuracy 0.600, "
        "kappa 0.167 (TP 2, FP 1, FN 1, TN 1)."
    ) in out


def test_calibrate_cli_json_linear(tmp_path, capsys):
    labels = tmp_path / "labels.csv"
    labels.write_text(LABELS)
    assert main(["calibrate", str(labels), "--weights", "linear", "--scale", "5", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    [criterion] = data["criteria"]
    assert criterion["kappa"] == pytest.approx(16 / 21) and criterion["categories"] == [1, 2, 3, 4, 5]
    assert data["weights"] == "linear" and data["verdict"]["f1"] == pytest.approx(2 / 3)


def test_a_systematic_disagreement_is_named(tmp_path, capsys):
    rows = ["trial,criterion,human,judge"]
    rows += [f"t{i},style,{h},{j}" for i, (h, j) in enumerate([(2, 3), (3, 4), (3, 4), (4, 5), (2, 2)])]
    rows += [f"t{i},correctness,{h},{h}" for i, h in enumerate([2, 3, 3, 4, 2])]
    labels = tmp_path / "labels.csv"
    labels.write_text("\n".join(rows) + "\n")
    assert main(["calibrate", str(labels)]) == 0
    out = capsys.readouterr().out
    # style: differences +1, +1, +1, +1, 0 → mean +0.8, all 4 non-zero ones upward
    assert (
        "Systematic: style: the judge higher than humans by 0.80 points on average (4 of 4 disagreements that way)."
        in out
    )
    assert "Systematic: correctness" not in out
    assert "(all criteria)" in out  # two ordinal criteria pooled
    assert "Pass verdict: no `pass` rows" in out


def test_continuous_scores_get_spearman_but_no_kappa(tmp_path, capsys):
    labels = tmp_path / "labels.csv"
    labels.write_text("trial,criterion,human,judge\na,overall,0.5,0.6\nb,overall,0.9,0.8\nc,overall,0.1,0.3\n")
    assert main(["calibrate", str(labels)]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("overall"))
    assert line.split()[2] == "n/a" and line.split()[3] == "1.000"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param("trial,criterion,human\n", r"line 1: header \['trial', 'criterion', 'human'\] lacks column\(s\) judge; "
                     "start the file with: trial,criterion,human,judge", id="header"),
        pytest.param("trial,criterion,human,judge\nt1,style,four,4\n",
                     r"line 2: field 'human': 'four' is not a number; write the score as a number, e\.g\. 4", id="not-a-number"),
        pytest.param("trial,criterion,human,judge\nt1,style,,4\n",
                     r"line 2: field 'human': '' is not a number; give a score or remove the row", id="empty"),
        pytest.param("trial,criterion,human,judge\nt1,pass,pass,maybe\n",
                     r"line 2: field 'judge': 'maybe' is not a verdict; write pass or fail", id="verdict"),
        pytest.param("trial,criterion,human,judge\nt1,style,3,4\nt1,style,3,3\n",
                     r"line 3: trial 't1' criterion 'style' repeats line 2; keep one row per trial and criterion", id="dup"),
        pytest.param("trial,criterion,human,judge\nt1,style,3\n", r"line 2: has 3 fields, the header has 4", id="short-row"),
        pytest.param("trial,criterion,human,judge\n,style,3,3\n", r"line 2: field 'trial' is empty; name the trial",
                     id="no-trial"),
        pytest.param("trial,criterion,human,judge\n", r"no rows under the header", id="no-rows"),
        pytest.param("trial,criterion,human,judge\nt1,style,nan,3\n", r"line 2: field 'human': 'nan' is not a number",
                     id="nan"),
    ],
)  # fmt: skip
def test_a_bad_csv_exits_2_with_file_line_field_value_and_fix(tmp_path, capsys, text, message):
    labels = tmp_path / "labels.csv"
    labels.write_text(text)
    assert main(["calibrate", str(labels)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"passhat: error: {labels}: ") and "\n" not in err
    assert re.search(message, err), err


def test_scores_outside_the_given_scale_are_named(tmp_path, capsys):
    labels = tmp_path / "labels.csv"
    labels.write_text("trial,criterion,human,judge\nt1,style,3,7\n")
    assert main(["calibrate", str(labels), "--scale", "5"]) == 2
    assert "line 2: field 'judge': 7 is outside --scale 5 (1..5)" in capsys.readouterr().err


def test_the_scale_constrains_ordinal_criteria_only(tmp_path, capsys):
    # `overall` is continuous (0.55 is no point of a scale): its 0.0 and 1.0 are scores, not points outside 1..5.
    labels = tmp_path / "labels.csv"
    labels.write_text("trial,criterion,human,judge\nt1,style,3,4\nt2,style,5,5\nt1,overall,0.0,0.55\n"
                      "t2,overall,1.0,0.9\n")  # fmt: skip
    assert main(["calibrate", str(labels), "--scale", "5", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    overall, style = data["criteria"]
    assert (overall["criterion"], overall["ordinal"], overall["kappa"]) == ("overall", False, None)
    assert (style["criterion"], style["categories"]) == ("style", [1, 2, 3, 4, 5])


def test_a_missing_file(tmp_path, capsys):
    assert main(["calibrate", str(tmp_path / "none.csv")]) == 2
    assert "none.csv: no such file; pass a CSV with columns trial, criterion, human, judge" in capsys.readouterr().err
