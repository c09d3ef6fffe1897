"""The charts draw what they are given where it can be seen: the y range of agreement over time
holds every value and interval bound, periods sit on a time axis, confusion cells keep a size."""

from __future__ import annotations

from annotate.report import charts

ROOT_FILES = ("app.py", "ui.py")


def period(name: str, alpha: tuple[float, float, float], agreement=(0.8, 0.7, 0.9)) -> dict:
    def stat(values):
        return dict(zip(("value", "low", "high"), values, strict=True))

    return {"period": name, "percent_agreement": stat(agreement), "krippendorff_alpha": stat(alpha)}


def test_a_negative_alpha_and_its_interval_are_inside_the_y_range():
    periods = [
        period("week of 2026-03-02", (0.9, 0.8, 1.0)),
        period("week of 2026-03-16", (-0.67, -0.93, -0.2)),
    ]
    spec = charts.over_time_chart(periods).to_dict()
    low, high = spec["layer"][1]["encoding"]["y"]["scale"]["domain"]
    assert low <= -0.93 and high >= 1.0 and low >= -1.0
    assert spec["layer"][0]["encoding"]["y"]["scale"]["domain"] == [low, high]  # bars too


def test_without_negative_values_the_range_is_zero_to_one():
    spec = charts.over_time_chart([period("2026-03-02", (0.5, 0.1, 0.9))]).to_dict()
    assert spec["layer"][1]["encoding"]["y"]["scale"]["domain"] == [0.0, 1.0]


def test_periods_are_on_a_time_axis_at_their_real_distance():
    periods = [period("2026-03-02", (0.5, 0.1, 0.9)), period("2026-03-09", (0.5, 0.1, 0.9))]
    frame = charts.over_time_frame(periods)
    assert (frame["start"].max() - frame["start"].min()).days == 7
    spec = charts.over_time_chart(periods).to_dict()
    assert spec["layer"][1]["encoding"]["x"]["type"] == "temporal"


def test_confusion_cells_have_a_fixed_size_whatever_the_column():
    spec = charts.confusion_chart({"tp": 8, "fp": 8, "fn": 3, "tn": 40}).to_dict()
    assert spec["height"] == {"step": charts.CELL} and spec["width"] == {"step": charts.CELL}
    assert charts.CELL >= 60


def test_no_page_asks_for_an_icon_from_a_font_server():
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    files = [root / f for f in ROOT_FILES] + sorted((root / "pages").glob("*.py"))
    files += sorted((root / "widgets").glob("*.py"))
    for path in files:
        text = path.read_text()
        assert ":material/" not in text and "icon=" not in text, path
