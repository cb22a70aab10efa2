"""The tree layout of the compiled language model: each reading sees the left words and itself, never the other."""

from __future__ import annotations

import numpy as np

from namesake.language_model.compiled import MIN_WIDTH, pack, tree_batch


def test_each_reading_sees_the_left_words_and_itself_only_and_starts_where_they_end() -> None:
    left, original, final = [1, 2, 3], [10, 11], [20]
    rows = [(left, original, final), ([1], [5], [6, 7, 8])]
    batch = tree_batch(rows, [[0], [1]], head_dim=4, rope_base=10000.0, min_width=1)
    assert batch.ids.shape == (2, 6)  # the longer row: 1 + 1 + 3 tokens, the first 3 + 2 + 1
    assert batch.ids[0].tolist() == [1, 2, 3, 10, 11, 20]
    sees = batch.mask[0, 0] == 0
    assert sees[2, :3].all() and not sees[1, 2]  # causal within the left words
    assert sees[4, [0, 1, 2, 3, 4]].all()  # the original's second token: left words and the original so far
    assert sees[5, [0, 1, 2, 5]].all() and not sees[5, [3, 4]].any()  # the final never sees the original
    # both readings sit where the left words end: positions 3, 4 and 3 again
    # the first pair turns one radian a step
    position = np.mod(np.arctan2(batch.sin[0, :, 1], batch.cos[0, :, 1]), 2 * np.pi)
    assert np.allclose(position, [0, 1, 2, 3, 4, 3], atol=1e-5)
    assert np.allclose(batch.cos[0, :, 0], batch.cos[0, :, 1])  # each value repeated for its pair
    assert np.allclose(batch.sin[0, :, 0], -batch.sin[0, :, 1])  # the swapped pair turns as (−sin, sin)
    # the first token of each reading is predicted by the last left state, the next by the reading's own
    assert batch.rows[:3].tolist() == [2, 3, 2] and batch.targets[:3].tolist() == [10, 11, 20]
    assert batch.reading[:3].tolist() == [0, 0, 1]
    # the second row is padded: padding looks at itself only, and is never scored
    pad = batch.mask[1, 0, 5] == 0
    assert pad.tolist() == [False] * 5 + [True]
    assert batch.reading[3:].tolist() == [2, 3, 3, 3] and 6 + 5 not in batch.rows.tolist()
    # by default a batch is never narrower than MIN_WIDTH: the padding looks at itself only, and is never scored
    wide = tree_batch(rows, [[0], [1]], head_dim=4, rope_base=10000.0)
    assert wide.ids.shape == (2, MIN_WIDTH) and wide.targets.tolist() == batch.targets.tolist()
    assert ((wide.mask[:, 0, 6:] == 0).sum(axis=-1) == 1).all()


def test_windows_packed_on_one_line_never_see_each_other_and_each_starts_at_position_zero() -> None:
    rows = [([1, 2], [10], [20]), ([3], [30, 31], [40])]
    assert pack([4, 4, 9, 2], width=8) == [[2], [0, 1], [3]]  # longest first, each into the first line with room
    batch = tree_batch(rows, [[0, 1]], head_dim=4, rope_base=10000.0)
    assert batch.ids.tolist() == [[1, 2, 10, 20, 3, 30, 31, 40]]
    sees = batch.mask[0, 0] == 0
    assert not sees[4:, :4].any()  # the second window's tokens see nothing of the first
    assert sees[6, [4, 5, 6]].all() and not sees[7, [5, 6]].any()  # within it: left words, own reading
    position = np.mod(np.arctan2(batch.sin[0, :, 1], batch.cos[0, :, 1]), 2 * np.pi)
    assert np.allclose(position, [0, 1, 2, 2, 0, 1, 2, 1], atol=1e-5)
    assert batch.rows.tolist() == [1, 1, 4, 5, 4] and batch.reading.tolist() == [0, 1, 2, 2, 3]
