"""The language model's forward pass compiled by OpenVINO: ~5× the numpy pass on the same CPU.

Each window is its left words once, then both readings side by side, each seeing the left words and itself
only (a tree mask), so nothing is computed twice and no keys or values travel between passes; windows are
packed several to a line, blind to each other, so padding costs next to nothing. The graph
runs at the CPU's faster precision, measured once per machine (`fastest_runner`: bfloat16 wins on AMX cores and
on some AVX-512 BF16 ones, float32 on others), but the logit of each scored token is taken in float32 from the
states: the drift from the numpy pass stays ~0.1 nat on average (docs/benchmarks/speed.md). The first process
on a machine compiles it and keeps the compiled graphs beside the model's blocks; later ones import them.
"""

from __future__ import annotations

import json
import logging
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from namesake.core import keep, shown, thread_budget
from namesake.language_model.batching import LineBatcher
from namesake.language_model.kept import PRECISIONS, imported, kept_paths, kept_precision, machine_key
from namesake.language_model.packed import Blocks, Matrix, PackedModel, rows_of

# Windows are packed into lines of this many tokens (a longer window gets a line of its own), lines go through
# the graph this many at a time: padding only at the ends of lines (~1% on the 9k call, 13% one window a row).
LINE_TOKENS = 64
LINES_PER_BATCH = 24
# A batch is at least this many tokens wide: the CPU plugin multiplies fewer rows another way, and a short window
# must read the same alone as beside others' lines (language_model.batching).
MIN_WIDTH = 8
# States through the output head at a time: its (rows, 49,152) logits stay small.
HEAD_ROWS = 128
HEAD_MIN_ROWS = 8
_PAD, _LEFT, _ORIGINAL, _FINAL = -1, 0, 1, 2
Row = tuple[list[int], list[int], list[int]]
# Of the precisions weighed on a CPU that has both (kept.PRECISIONS), float32 must be this much faster to be chosen
# (the shipped reading trees were fitted on bfloat16 gains); the probe reads this many windows shaped like a call's
# (13 left tokens, 3 + 3 reading tokens), after one warm-up read of them.
F32_MARGIN = 0.9
PROBE_WINDOWS = 24
log = logging.getLogger(__name__)
# `import openvino` also imports its model converter, which sends a usage event to Google Analytics from a forked
# process (a fork beside OpenBLAS's threads can hang: threads.BLAS_LOCK) and writes ~/intel. Nothing here converts a
# model: the package skips the converter when it cannot be imported.
sys.modules.setdefault("openvino.tools.ovc", None)  # type: ignore[arg-type]  # None: "cannot be imported"


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


def tree_batch(
    rows: Sequence[Row], lines: Sequence[Sequence[int]], head_dim: int, rope_base: float, min_width: int = MIN_WIDTH
) -> TreeBatch:
    """(left, original reading, final reading) token lists, placed side by side on `lines` (indices into rows).

    A token sees earlier tokens of its own window only: the left words, and its own reading. Both readings
    start at the position after the left words: each reads as if it alone followed them.
    """
    width = max(min_width, *(sum(len(t) for i in line for t in rows[i]) for line in lines))
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


def _weight(w: Matrix) -> Any:
    """A (rows, columns) float32 matrix node: in blocks decompressed inside the product (packed), or as it is.

    Every constant is OpenVINO's own copy: the compiled model may keep pointing into it after the arrays it was
    made from are gone."""
    import openvino as ov
    import openvino.opset13 as o

    if not isinstance(w, Blocks):
        return o.constant(w)
    rows, blocks = w.codes.shape[:2]
    codes = ov.Tensor(ov.Type.u4 if w.bits == 4 else ov.Type.i8, [rows, blocks, 32])
    np.copyto(codes.data.reshape(w.codes.shape), w.codes)
    values = o.convert(o.constant(codes), ov.Type.f32)
    if w.zero is not None:
        values = o.subtract(values, o.constant(w.zero))
    values = o.multiply(values, o.constant(w.scale))
    return o.reshape(values, o.constant(np.array(w.shape, dtype=np.int64)), False)


def _graph(m: PackedModel) -> tuple[Any, Any]:
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

    def project(x: Any, w: Matrix) -> Any:  # x · wᵀ: the weights' rows are the outputs
        return o.matmul(x, _weight(w), False, True)

    def rotary(t: Any, cos: Any, sin: Any, n: int) -> Any:  # t·cos + (its pairs swapped)·sin, sin signed (tree_batch)
        pairs = o.reshape(t, o.concat([bt, const([n * hd // 2, 2])], 0), False)
        swapped = o.reshape(o.gather(pairs, const([1, 0]), np.int64(-1)), o.concat([bt, const([n * hd])], 0), False)
        return o.add(o.multiply(t, cos), o.multiply(swapped, sin))

    x = o.gather(_weight(m.embed), ids, np.int64(0))
    scale = np.float32(1.0 / np.sqrt(hd))
    for layer in m.layers:
        normed = rms(x, np.asarray(layer["attn_norm"]))
        q = rotary(project(normed, layer["q"]), cq, sq, nh)
        k = rotary(project(normed, layer["k"]), ck, sk, nkv)
        att = o.scaled_dot_product_attention(
            heads(q, nh), shared(heads(k, nkv)), shared(heads(project(normed, layer["v"]), nkv)), mask, scale
        )
        att = o.reshape(o.transpose(att, const([0, 2, 1, 3])), o.concat([bt, const([d])], 0), False)
        x = o.add(x, project(att, layer["o"]))
        normed = rms(x, np.asarray(layer["ffn_norm"]))
        gated = o.multiply(o.swish(project(normed, layer["gate"])), project(normed, layer["up"]))
        x = o.add(x, project(gated, layer["down"]))
    states = o.gather(o.reshape(rms(x, m.out_norm), const([-1, d]), False), rows, np.int64(0))
    body = ov.Model([states], [ids, cos, sin, mask, rows], "namesake-lm-body")

    hidden = o.parameter([-1, d], ov.Type.f32, name="states")
    logits = project(hidden, m.head)
    top = o.reduce_max(logits, const([-1]), keep_dims=True)
    total = o.reduce_sum(o.exp(o.subtract(logits, top)), const([-1]), keep_dims=False)
    head = ov.Model([o.add(o.log(total), o.squeeze(top, const([1])))], [hidden], "namesake-lm-head")
    return body, head


class OpenVinoRunner:
    """Compiled body and head: log P(reading) sums for rows of (left, original reading, final reading)."""

    def __init__(self, model: PackedModel, threads: int | None = None, precision: str | None = None) -> None:
        import openvino as ov

        # what reading needs after compiling: the rest of the model's arrays are OpenVINO's copies now
        self.head_dim, self.rope_base, self.head_weights = model.head_dim, model.rope_base, model.head
        core = ov.Core()
        n = thread_budget() if threads is None else threads
        common = {"INFERENCE_NUM_THREADS": str(n), "ENABLE_CPU_PINNING": "NO", "PERFORMANCE_HINT": "LATENCY"}
        # the blocks' products on the values they stand for: OpenVINO would otherwise round the states to 8 bits
        # before a product with 8-bit weights (0.06 nat off in the output head's normaliser)
        common["DYNAMIC_QUANTIZATION_GROUP_SIZE"] = "0"
        if precision == "bf16" and not has_bfloat16(core):
            precision = "f32"  # a CPU without bfloat16 reads in float32 whatever is asked
        if precision is not None:
            common["INFERENCE_PRECISION_HINT"] = precision
        self._kept = kept_paths(model, common, ov.__version__)
        found = imported(core, self._kept, common)
        body, head, self._maps = found or (*_compiled(core, model, common), [])
        self._compiled = (body, head)
        self.imported = found is not None  # read from the kept files, not compiled
        self.precision = body.get_property("INFERENCE_PRECISION_HINT").to_string()
        self._body = body.create_infer_request()
        self._head = head.create_infer_request()
        # every batch is read on this one long-lived thread, whichever request's thread leads it: the runtime keeps
        # state for each thread that ever ran an inference, and a server's request threads come and go
        self._reader = ThreadPoolExecutor(1, thread_name_prefix="language-model")
        self._batcher: LineBatcher[Row] = LineBatcher(self._read_on_reader, LINES_PER_BATCH)

    def keep_compiled(self) -> None:
        """Write the compiled graphs beside the model's blocks (~150 MB), once: a later process imports them in
        ~0.4 s instead of compiling for ~2 s."""
        if self._kept is None or self.imported or all(p.is_file() for p in self._kept):
            return
        blobs = [compiled.export_model().getvalue() for compiled in self._compiled]
        # a first run says what it leaves on disk, and where (WARNING: the CLI shows it without a log setup)
        size, where = sum(len(b) for b in blobs) / 1e6, shown(self._kept[0].parent.parent)
        log.warning("first run: keeping the compiled language model (%.0f MB) in %s", size, where)
        for path, blob in zip(self._kept, blobs, strict=True):
            keep(path, blob, "compiled language model")

    def release_buffers(self) -> None:
        """Give the graphs' working memory back (~100 MB after a full batch: the head's logits, the blocks' states),
        between batches; the next read allocates it again (~0.04 s)."""
        self._batcher.when_free(lambda: self._reader.submit(self._release_memory).result())

    def _release_memory(self) -> None:
        for compiled in self._compiled:
            compiled.release_memory()

    def log_probs(self, rows: Sequence[Row]) -> np.ndarray:
        """(log P(original reading), log P(final reading)) per row, (n, 2); windows packed into lines of their own,
        read in batches shared with the lines of whatever else is being read meanwhile (`batching`)."""
        return self._batcher.read(rows, pack([sum(map(len, r)) for r in rows], LINE_TOKENS))

    def _read_on_reader(self, rows: Sequence[Row], lines: list[list[int]]) -> np.ndarray:
        """`_read_lines` on the runner's own thread (the caller waits: batches are one at a time anyway)."""
        return self._reader.submit(self._read_lines, rows, lines).result()

    def _head_rows(self, states: np.ndarray) -> np.ndarray:
        """The head's normaliser of each state; fewer than HEAD_MIN_ROWS padded up to it, since the CPU plugin
        multiplies those few another way (2e-5 nat off) and a batch's last rows must read as any others."""
        short = HEAD_MIN_ROWS - len(states)
        padded = np.concatenate([states, np.zeros((short, states.shape[1]), states.dtype)]) if short > 0 else states
        return np.array(self._head.infer([padded])[0][: len(states)])

    def _read_lines(self, rows: Sequence[Row], lines: list[list[int]]) -> np.ndarray:
        """One batch of lines through the body and the head: (len(rows), 2), rows on no line left at zero."""
        totals = np.zeros(2 * len(rows))
        batch = tree_batch(rows, lines, self.head_dim, self.rope_base)
        # both readings' first tokens are predicted by the same state (the last left word's): one head row
        unique, each = np.unique(batch.rows, return_inverse=True)
        states = self._body.infer([batch.ids, batch.cos, batch.sin, batch.mask, unique])[0]
        chunks = [self._head_rows(states[i : i + HEAD_ROWS]) for i in range(0, len(states), HEAD_ROWS)]
        norm = np.concatenate(chunks)[each]
        # the target's own logit exactly (float32); the normaliser from the fast head
        picked = np.einsum("nd,nd->n", states[each], rows_of(self.head_weights, batch.targets))
        np.add.at(totals, batch.reading, picked - norm)
        return totals.reshape(-1, 2)


def fastest_runner(model: PackedModel, keep_in: Path | None = None) -> OpenVinoRunner:
    """The compiled pass at whichever precision reads faster on this CPU, measured once and kept in `keep_in`.

    No rule of CPU flags predicts it: bfloat16 ran 3-5x float32 on AMX cores, 2x on one AVX-512 BF16 host and
    0.7x on another (docs/benchmarks/speed.md)."""
    import openvino as ov

    if not has_bfloat16(ov.Core()):
        return runner_at(model, "f32")
    kept = None if keep_in is None else keep_in / f"precision-{machine_key(model, ov.__version__)}.json"
    chosen = kept_precision(kept)
    if chosen is not None:
        return runner_at(model, chosen)
    runners = {p: OpenVinoRunner(model, precision=p) for p in PRECISIONS}
    rows = _probe_rows(model.vocabulary)
    seconds = {p: _read_seconds(r, rows) for p, r in runners.items()}
    chosen = "f32" if seconds["f32"] < F32_MARGIN * seconds["bf16"] else "bf16"
    log.info("language model precision: %s (%s)", chosen, ", ".join(f"{p} {t:.2f} s" for p, t in seconds.items()))
    if kept is not None:  # where it cannot be kept, the next process measures again
        keep(kept, json.dumps({"precision": chosen, "seconds": seconds}).encode(), "language model precision")
    runners[chosen].keep_compiled()
    return runners[chosen]


def runner_at(model: PackedModel, precision: str) -> OpenVinoRunner:
    """The runner at a known precision, its compiled graphs kept for the next process."""
    runner = OpenVinoRunner(model, precision=precision)
    runner.keep_compiled()
    return runner


def has_bfloat16(core: Any) -> bool:
    """Whether OpenVINO's CPU plugin can run this CPU in bfloat16 at all (else float32 is the only choice)."""
    return "BF16" in core.get_property("CPU", "OPTIMIZATION_CAPABILITIES")


def _compiled(core: Any, model: PackedModel, config: dict[str, str]) -> tuple[Any, Any]:
    """The body and head compiled from the model's blocks (~2 s on two cores)."""
    body, head = _graph(model)
    return core.compile_model(body, "CPU", config), core.compile_model(head, "CPU", config)


def _probe_rows(vocabulary: int) -> list[Row]:
    """A fixed batch of windows shaped like a call's, random tokens (only their count matters to the time)."""
    rng = np.random.default_rng(0)
    return [
        ([int(t) for t in rng.integers(1, vocabulary, 13)], [int(t) for t in rng.integers(1, vocabulary, 3)],
         [int(t) for t in rng.integers(1, vocabulary, 3)])
        for _ in range(PROBE_WINDOWS)
    ]  # fmt: skip


def _read_seconds(runner: OpenVinoRunner, rows: list[Row]) -> float:
    """Seconds to read the rows once more after a first read (which pays the kernels' own warm-up)."""
    runner.log_probs(rows)
    t0 = time.perf_counter()
    runner.log_probs(rows)
    return time.perf_counter() - t0
