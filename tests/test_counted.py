from annotate.errors import counted


def test_one_is_singular_and_every_other_count_plural():
    assert counted(1, "claim") == "1 claim"
    assert counted(0, "claim") == "0 claims"
    assert counted(2, "trace") == "2 traces"
    assert counted(1200, "row") == "1,200 rows"
    assert counted(1, "stratum") == "1 stratum" and counted(60, "stratum") == "60 strata"
