"""Where a process's anonymous memory lives, read off /proc/PID/smaps: the main heap, malloc's other arenas, thread
stacks and the rest (large allocations and native runtimes' own maps), so that a soak says which one kept growing."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

# glibc's non-main arenas are heaps reserved 64 MB at a time, each aligned to its size (HEAP_MAX_SIZE on 64-bit).
ARENA_HEAP_BYTES = 64 * 1024 * 1024
# A thread's stack: the default pthread size (the stack ulimit, 8 MB here) below a one-page guard.
STACK_BYTES = 8 * 1024 * 1024
KINDS = ("main heap", "malloc arenas", "thread stacks", "other anonymous")


@dataclass(frozen=True)
class Mapping:
    """One mapping of smaps: its address range, permissions, path ("" for anonymous) and anonymous resident kB."""

    start: int
    end: int
    perms: str
    path: str
    anon_kb: int

    @property
    def size(self) -> int:
        return self.end - self.start


def parse_smaps(text: str) -> list[Mapping]:
    """The mappings of an smaps file, in address order."""
    out: list[Mapping] = []
    head: tuple[int, int, str, str] | None = None
    anon = 0
    for line in text.splitlines():
        first = line.split(None, 1)[0] if line.strip() else ""
        if "-" in first and not first.endswith(":"):
            if head is not None:
                out.append(Mapping(*head, anon))
            parts = line.split(None, 5)
            lo, hi = (int(x, 16) for x in parts[0].split("-"))
            head, anon = (lo, hi, parts[1], parts[5].strip() if len(parts) > 5 else ""), 0
        elif first == "Anonymous:":
            anon = int(line.split()[1])
    if head is not None:
        out.append(Mapping(*head, anon))
    return out


def kind_of(m: Mapping, below: Mapping | None) -> str | None:
    """Which kind of anonymous memory a mapping is (None: a file's, or a reserve with nothing resident)."""
    if m.path == "[heap]":
        return "main heap"
    if m.path and not m.path.startswith("[anon"):
        return None if m.anon_kb == 0 else "other anonymous"  # a file's private pages written to
    if m.start % ARENA_HEAP_BYTES == 0 and m.size <= ARENA_HEAP_BYTES:
        return "malloc arenas"
    guarded = below is not None and below.end == m.start and below.perms.startswith("---")
    if guarded and abs(m.size - STACK_BYTES) <= 64 * 1024:
        return "thread stacks"
    return "other anonymous"


def anon_by_kind(pid: int) -> dict[str, float]:
    """A process's anonymous resident memory by kind (MB), and its thread count."""
    maps = parse_smaps(Path(f"/proc/{pid}/smaps").read_text())
    mb = dict.fromkeys(KINDS, 0.0)
    for below, m in zip([None, *maps[:-1]], maps, strict=True):
        kind = kind_of(m, below)
        if kind is not None:
            mb[kind] += m.anon_kb / 1024
    status = Path(f"/proc/{pid}/status").read_text()
    threads = next((int(line.split()[1]) for line in status.splitlines() if line.startswith("Threads:")), 0)
    return {**mb, "threads": float(threads)}


def tree_pids(pid: int) -> list[int]:
    """The process and every process under it (a server's stage process, its resource tracker), read off /proc."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:  # ended while read
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(children.get(p, []))
    return out


def tree_mb(pid: int, kind: str = "VmRSS") -> float:
    """Memory of a process and those under it (MB): `VmRSS` or `RssAnon` summed off each one's status, or `Pss` (its
    share of every page, so that pages the processes share are counted once) summed off each one's smaps_rollup."""
    total = 0.0
    for p in tree_pids(pid):
        name = "smaps_rollup" if kind == "Pss" else "status"
        try:
            lines = Path(f"/proc/{p}/{name}").read_text().splitlines()
        except OSError:
            continue
        total += sum(int(line.split()[1]) for line in lines if line.startswith(f"{kind}:")) / 1024
    return total


def tree_by_process(pid: int) -> dict[str, float]:
    """The resident memory (MB) of a process and of each one under it, by what it is: the server, its stage process,
    multiprocessing's resource tracker."""
    out: dict[str, float] = {}
    for p in tree_pids(pid):
        try:
            cmdline = Path(f"/proc/{p}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            rss = next(line for line in Path(f"/proc/{p}/status").read_text().splitlines() if line.startswith("VmRSS:"))
        except (OSError, StopIteration):
            continue
        name = "server" if p == pid else "stage process" if "spawn_main" in cmdline else "resource tracker"
        out[name] = out.get(name, 0.0) + int(rss.split()[1]) / 1024
    return out
