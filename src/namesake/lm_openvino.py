"""The language model's forward pass compiled by OpenVINO: ~5× the numpy pass on the same CPU.

Each window is its left words once, then both readings side by side, each seeing the left words and itself
only (a tree mask), so nothing is computed twice and no keys or values travel between passes; windows are
packed several to a line, blind to each other, so padding costs next to nothing. The graph
runs at the CPU's fastest precision (bfloat16 on AMX or AVX-512 BF16 cores, float32 elsewhere), but the logit
of each scored token is taken in float32 from the states: the drift from the numpy pass stays ~0.1 nat on
average (docs/architecture.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from namesake.threads import thread_budget

if TYPE_CHECKING:
    from namesake.language_model import LlamaModel

# Windows are packed into lines of this many tokens (a longer window gets a line of its own), lines go through
# the graph this many at a time: padding only at the ends of lines (~1% on the 9k call, 13% one window a row).
LINE_TOKENS = 64
LINES_PER_BATCH = 24
# States through the output head at a time: its (rows, 49,152) logits stay small.
HEAD_ROWS = 128
_PAD, _LEFT, _ORIGINAL, _FINAL = -1, 0, 1, 2
Row = tuple[list[int], list[int], list[int]]


@dataclass(frozen=True)
class TreeBatch:
    """What one inference takes, and which reading each scored token belongs to."""

    ids: np.ndarray  # (B, T) token ids, 0 on padding
    cos: np.ndarray  # (B, T, head_dim) rotary cosines at each token's position, each repeated for its pair
    sin: np.ndarray  # (B, T, head_dim) the sines, as (−s, s) per pair
    mask: np.ndarray  # (B, 1, T, T) additive: 0 where a token may look, -inf elsewhere
    rows: np.ndarray  # (N,) flat B·T index of the state that predicts each scored token
    targets: np.ndarray  # (N,) the token it should predict
    reading: np.ndarray  # (N,) 2·window for the original reading, 2·window + 1 for the final


def pack(lengths: Sequence[int], width: int) -> list[list[int]]:
    """Window indices per line, longest first into the first line with room (first fit decreasing)."""
    lines: list[list[int]] = []
    room: list[int] = []
    for i in sorted(range(len(lengths)), key=lambda i: -lengths[i]):
        line = next((j for j, free in enumerate(room) if lengths[i] <= free), None)
        if line is None:
            lines.append([])
            room.append(max(width, lengths[i]))
            line = len(lines) - 1
        lines[line].append(i)
        room[line] -= lengths[i]
    return lines


def tree_batch(rows: Sequence[Row], lines: Sequence[Sequence[int]], head_dim: int, rope_base: float) -> TreeBatch:
    """(left, original reading, final reading) token lists, placed side by side on `lines` (indices into rows).

    A token sees earlier tokens of its own window only: the left words, and its own reading. Both readings
    start at the position after the left words: each reads as if it alone followed them.
    """
    width = max(sum(len(t) for i in line for t in rows[i]) for line in lines)
    ids = np.zeros((len(lines), width), dtype=np.int64)
    pos = np.zeros((len(lines), width), dtype=np.int64)
    seg = np.full((len(lines), width), _PAD, dtype=np.int64)
    win = np.full((len(lines), width), -1, dtype=np.int64)
    scored: list[int] = []
    targets: list[int] = []
    reading: list[int] = []
    for b, line in enumerate(lines):
        col = 0
        for i in line:
            p, a, o = rows[i]
            lp, n = len(p), len(p) + len(a) + len(o)
            at, cells = b * width + col, slice(col, col + n)
            ids[b, cells] = p + a + o
            pos[b, cells] = [*range(lp), *range(lp, lp + len(a)), *range(lp, lp + len(o))]
            seg[b, cells] = [_LEFT] * lp + [_ORIGINAL] * len(a) + [_FINAL] * len(o)
            win[b, cells] = i
            for which, (start, tokens) in enumerate(((lp, a), (lp + len(a), o))):
                # the first token is predicted by the last left state, the next ones by the reading's own states
                scored += [at + lp - 1, *(at + start + k for k in range(len(tokens) - 1))]
                targets += tokens
                reading += [2 * i + which] * len(tokens)
            col += n
    order = np.arange(width)
    causal = order[None, :] <= order[:, None]
    same_window = win[:, None, :] == win[:, :, None]
    same_reading = (seg[:, None, :] == _LEFT) | (seg[:, None, :] == seg[:, :, None])
    allowed = causal[None] & same_window & same_reading & (seg[:, :, None] != _PAD)
    allowed[:, order, order] = True  # padding looks at itself: no empty softmax
    mask = np.where(allowed, np.float32(0.0), np.float32(-np.inf))[:, None]
    inv = rope_base ** (-np.arange(0, head_dim, 2, dtype=np.float64) / head_dim)
    angles = pos[..., None] * inv
    cos = np.repeat(np.cos(angles).astype(np.float32), 2, axis=-1)
    sin = np.repeat(np.sin(angles).astype(np.float32), 2, axis=-1)
    sin[..., 0::2] *= -1  # a pair (x0, x1) turns into (x0·c − x1·s, x1·c + x0·s): the swapped pair times (−s, s)
    return TreeBatch(ids, cos, sin, mask, np.array(scored), np.array(targets), np.array(reading))


def _graph(m: LlamaModel) -> tuple[Any, Any]:
    """The body (token ids → final-normed states of the scored tokens) and the head (states → log P(target))."""
    import openvino as ov
    import openvino.opset13 as o

    d, nh, nkv, hd = m.d, m.n_head, m.n_kv, m.head_dim
    group = nh // nkv

    def const(values: Sequence[int]) -> Any:
        return o.constant(np.array(values, dtype=np.int64))

    def rms(x: Any, weight: np.ndarray) -> Any:
        var = o.reduce_mean(o.power(x, np.float32(2.0)), const([-1]), keep_dims=True)
        return o.multiply(o.multiply(x, o.power(o.add(var, np.float32(m.eps)), np.float32(-0.5))), o.constant(weight))

    ids = o.parameter([-1, -1], ov.Type.i64, name="ids")
    cos = o.parameter([-1, -1, hd], ov.Type.f32, name="cos")
    sin = o.parameter([-1, -1, hd], ov.Type.f32, name="sin")
    mask = o.parameter([-1, 1, -1, -1], ov.Type.f32, name="mask")
    rows = o.parameter([-1], ov.Type.i64, name="rows")
    bt = o.slice(o.shape_of(ids), const([0]), const([2]), const([1]))  # (B, T)
    b1 = o.slice(o.shape_of(ids), const([0]), const([1]), const([1]))
    t1 = o.slice(o.shape_of(ids), const([1]), const([2]), const([1]))
    cq, sq = o.tile(cos, const([1, 1, nh])), o.tile(sin, const([1, 1, nh]))
    ck, sk = o.tile(cos, const([1, 1, nkv])), o.tile(sin, const([1, 1, nkv]))

    def heads(t: Any, n: int) -> Any:  # (B, T, n·D) → (B, n, T, D)
        return o.transpose(o.reshape(t, o.concat([bt, const([n, hd])], 0), False), const([0, 2, 1, 3]))

    def shared(t: Any) -> Any:  # a key-value head serves `group` query heads: (B, kv, T, D) → (B, H, T, D)
        wide = o.broadcast(o.unsqueeze(t, const([2])), o.concat([b1, const([nkv, group]), t1, const([hd])], 0))
        return o.reshape(wide, o.concat([b1, const([nh]), t1, const([hd])], 0), False)

    def project(x: Any, w: np.ndarray) -> Any:
        return o.matmul(x, o.constant(np.ascontiguousarray(w), shared_memory=w.flags.c_contiguous), False, False)

    def rotary(t: Any, cos: Any, sin: Any, n: int) -> Any:  # t·cos + (its pairs swapped)·sin, sin signed (tree_batch)
        pairs = o.reshape(t, o.concat([bt, const([n * hd // 2, 2])], 0), False)
        swapped = o.reshape(o.gather(pairs, const([1, 0]), np.int64(-1)), o.concat([bt, const([n * hd])], 0), False)
        return o.add(o.multiply(t, cos), o.multiply(swapped, sin))

    x = o.gather(o.constant(np.asarray(m.embed), shared_memory=True), ids, np.int64(0))
    scale = np.float32(1.0 / np.sqrt(hd))
    for layer in m.layers:
        # one product per output (no split nodes): q, k, v out of qkv; gate and up out of gate_up
        wq, wk, wv = np.split(np.asarray(layer["qkv"]), [nh * hd, (nh + nkv) * hd], axis=1)
        normed = rms(x, np.asarray(layer["attn_norm"]))
        q = rotary(project(normed, wq), cq, sq, nh)
        k = rotary(project(normed, wk), ck, sk, nkv)
        att = o.scaled_dot_product_attention(
            heads(q, nh), shared(heads(k, nkv)), shared(heads(project(normed, wv), nkv)), mask, scale
        )
        att = o.reshape(o.transpose(att, const([0, 2, 1, 3])), o.concat([bt, const([d])], 0), False)
        x = o.add(x, project(att, np.asarray(layer["o"])))
        wg, wu = np.split(np.asarray(layer["gate_up"]), 2, axis=1)
        normed = rms(x, np.asarray(layer["ffn_norm"]))
        x = o.add(x, project(o.multiply(o.swish(project(normed, wg)), project(normed, wu)), np.asarray(layer["down"])))
    states = o.gather(o.reshape(rms(x, np.asarray(m.out_norm)), const([-1, d]), False), rows, np.int64(0))
    body = ov.Model([states], [ids, cos, sin, mask, rows], "namesake-lm-body")

    hidden = o.parameter([-1, d], ov.Type.f32, name="states")
    logits = o.matmul(hidden, o.constant(np.asarray(m.head_t), shared_memory=True), False, False)
    top = o.reduce_max(logits, const([-1]), keep_dims=True)
    total = o.reduce_sum(o.exp(o.subtract(logits, top)), const([-1]), keep_dims=False)
    head = ov.Model([o.add(o.log(total), o.squeeze(top, const([1])))], [hidden], "namesake-lm-head")
    return body, head


class OpenVinoRunner:
    """Compiled body and head: log P(reading) sums for rows of (left, original reading, final reading)."""

    def __init__(self, model: LlamaModel, threads: int | None = None) -> None:
        import openvino as ov

        self.model = model
        core = ov.Core()
        n = thread_budget() if threads is None else threads
        common = {"INFERENCE_NUM_THREADS": str(n), "ENABLE_CPU_PINNING": "NO", "PERFORMANCE_HINT": "LATENCY"}
        body, head = _graph(model)
        self.precision = core.get_property("CPU", "INFERENCE_PRECISION_HINT").to_string()
        self._body = core.compile_model(body, "CPU", common).create_infer_request()
        self._head = core.compile_model(head, "CPU", common).create_infer_request()

    def log_probs(self, rows: Sequence[Row]) -> np.ndarray:
        """(log P(original reading), log P(final reading)) per row, (n, 2); windows packed into lines."""
        totals = np.zeros(2 * len(rows))
        lines = pack([sum(map(len, r)) for r in rows], LINE_TOKENS)
        for start in range(0, len(lines), LINES_PER_BATCH):
            batch = tree_batch(rows, lines[start : start + LINES_PER_BATCH], self.model.head_dim, self.model.rope_base)
            # both readings' first tokens are predicted by the same state (the last left word's): one head row
            unique, each = np.unique(batch.rows, return_inverse=True)
            states = self._body.infer([batch.ids, batch.cos, batch.sin, batch.mask, unique])[0]
            norm = np.concatenate(
                [self._head.infer([states[i : i + HEAD_ROWS]])[0].copy() for i in range(0, len(states), HEAD_ROWS)]
            )[each]
            # the target's own logit exactly (float32); the normaliser from the fast head
            picked = np.einsum("nd,dn->n", states[each], self.model.head_t[:, batch.targets])
            np.add.at(totals, batch.reading, picked - norm)
        return totals.reshape(-1, 2)
