"""Train tasks whose start state equals a test task's (grid, agent pose, mission).

Written by ``agentenv-babyai/benchmarks/train_test_duplicates.py``; the train split leaves these out.
"""

#: ``{train index: the test index with the same start state}``
TRAIN_TEST_DUPLICATES: dict[int, int] = {
    532: 12, 612: 292, 692: 132, 2012: 292, 2132: 92, 2652: 292, 2932: 132, 3292: 332, 3452: 92, 3652: 332,
    4772: 372, 4972: 292, 5292: 292, 5532: 52, 5652: 372, 6252: 92, 6612: 52, 6812: 292, 6972: 52, 7292: 132,
    7572: 52, 7932: 52, 7972: 52, 8252: 372, 8332: 292, 8652: 12, 8812: 332, 8852: 252, 9012: 12, 9692: 172,
    9772: 132, 10252: 372, 10652: 52, 10852: 292, 11132: 372, 11412: 332, 12172: 92, 12894: 254, 13092: 372,
    13692: 132, 14282: 322, 14372: 52, 14692: 332, 14852: 92, 15932: 132, 17292: 12, 17692: 52, 18172: 252,
    18252: 252, 20052: 12, 20372: 92,
}
