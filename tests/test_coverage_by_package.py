"""`make coverage` sums branch coverage per package of annotate/."""

from __future__ import annotations

from coverage_by_package import by_package, package_of


def test_files_are_summed_by_their_package():
    assert package_of("/repo/annotate/store/users.py") == "annotate/store"
    assert package_of("annotate/users.py") == "annotate/(top level)"
    report = {
        "files": {
            "annotate/store/a.py": {"summary": {"num_statements": 10, "covered_lines": 5,
                                                "num_branches": 4, "covered_branches": 1}},
            "annotate/store/b.py": {"summary": {"num_statements": 30, "covered_lines": 30,
                                                "num_branches": 0, "covered_branches": 0}},
        }
    }  # fmt: skip
    assert by_package(report)["annotate/store"] == {
        "num_statements": 40,
        "covered_lines": 35,
        "num_branches": 4,
        "covered_branches": 1,
    }
