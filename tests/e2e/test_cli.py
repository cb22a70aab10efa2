"""The `namesake` command as a user runs it: analyze a file, bad input, demo."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from namesake.adapters.db import Database
from namesake.cli import app
from namesake.core.settings import Settings

TRANSCRIPT = {
    "transcript_id": "cli-1",
    "segments": [{"id": "1", "text": "Reiner Blair thanked the Cytova team."}],
    "canonical_entities": {"persons": ["Rainer Blair"], "orgs": ["Cytiva"]},
}


@pytest.fixture
def env(settings: Settings, db: Database, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    monkeypatch.setenv("DATABASE_URL", str(settings.database_url))
    monkeypatch.setenv("NAMESAKE_DATA_DIR", str(settings.namesake_data_dir))
    return {}


def test_analyze_jsonl_gz_prints_one_prediction_line_per_transcript(env: dict[str, str], tmp_path: Path) -> None:
    path = tmp_path / "in.jsonl.gz"
    second = dict(TRANSCRIPT, transcript_id="cli-2")
    with gzip.open(path, "wt") as fh:
        fh.write(json.dumps(TRANSCRIPT) + "\n\n" + json.dumps(second) + "\n")
    result = CliRunner().invoke(app, ["analyze", str(path), "--user", "u1"])
    assert result.exit_code == 0, result.output
    lines = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    assert [line["transcript_id"] for line in lines] == ["cli-1", "cli-2"]
    sugg = lines[0]["suggestions"]
    assert {(s["original"], s["final"]) for s in sugg} >= {("Reiner", "Rainer"), ("Cytova", "Cytiva")}
    assert set(sugg[0]) >= {"id", "segment_id", "start_char", "end_char", "original", "final", "entity_type",
                            "confidence", "status", "source", "signals"}  # fmt: skip
    assert lines[0]["mode"] == "RAG_ENHANCED" and "stats" in lines[0] and lines[0]["seconds"] > 0


def test_analyze_table_format(env: dict[str, str], tmp_path: Path) -> None:
    path = tmp_path / "one.json"
    path.write_text(json.dumps(TRANSCRIPT))
    result = CliRunner().invoke(app, ["analyze", str(path), "--format", "table"])
    assert result.exit_code == 0, result.output
    assert "Rainer" in result.stdout and "cli-1" in result.stdout


@pytest.mark.slow
def test_worker_processes_give_the_same_output_in_the_same_order(env: dict[str, str], tmp_path: Path) -> None:
    path = tmp_path / "many.jsonl"
    texts = ["Reiner Blair thanked the Cytova team.", "Nothing to see here.", "Cytova and Reiner again."]
    path.write_text("".join(
        json.dumps(dict(TRANSCRIPT, transcript_id=f"w-{i}", segments=[{"id": "1", "text": texts[i % 3]}])) + "\n"
        for i in range(5)
    ))  # fmt: skip

    def run(workers: str) -> list[tuple[str, list[tuple[str, str, str, float]]]]:
        result = CliRunner().invoke(app, ["analyze", str(path), "--workers", workers])
        assert result.exit_code == 0, result.output
        lines = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
        return [
            (x["transcript_id"], [(s["original"], s["final"], s["status"], s["confidence"]) for s in x["suggestions"]])
            for x in lines
        ]

    sequential, parallel = run("1"), run("2")
    assert [t for t, _ in parallel] == [f"w-{i}" for i in range(5)]
    assert parallel == sequential and any(sugg for _, sugg in parallel)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"transcript_id": "b"}\n', ":1: segments"),
        ('{"transcript_id": "a", "segments": [{"id": "1"}]}\n', ":1: segments[0].text"),
        ("{not json\n", ":1: not JSON"),
        # a line cut short: its error is where it ends (column 38), not on the line after it (column 1)
        ('{"transcript_id": "a", "segments": []\n', ":1: not JSON (Expecting ',' delimiter at column 38)"),
        ('{"transcript_id": "../x", "segments": [{"id": "1", "text": "x"}]}\n', ":1: transcript_id"),
        ("[" * 100_000 + "]" * 100_000 + "\n", ":1: not a transcript (JSON nested too deeply)"),
        (
            '{"transcript_id": "a", "segments": [{"id": "1", "text": "x"}]}\n{"transcript_id": "\udcff"}\n',
            ":2: not UTF-8",
        ),
    ],
)
def test_bad_input_is_an_error_naming_file_and_line_with_exit_2_and_writes_nothing(
    env: dict[str, str], tmp_path: Path, db: Database, content: str, message: str
) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_bytes(content.encode("utf-8", "surrogateescape"))  # "\udcff" is the byte 0xff, not UTF-8
    result = CliRunner().invoke(app, ["analyze", str(path)])
    assert result.exit_code == 2
    assert message in result.stderr and str(path) in result.stderr
    errors = result.stderr.strip().splitlines()
    assert errors[0].startswith(f"error: {path}:") and len(errors) <= 2  # the line, and how many of the batch failed
    with db.engine.connect() as conn:
        assert conn.exec_driver_sql("SELECT count(*) FROM transcripts").scalar() == 0


@pytest.mark.parametrize(
    ("setting", "value", "message"),
    [
        (
            "RELIABILITY_READING_MODEL",
            "/nonexistent/reading.json",
            "RELIABILITY_READING_MODEL /nonexistent/reading.json",
        ),
        ("RELIABILITY_LANGUAGE_MODEL_LEFT_WORDS", "5", "the reading model was fitted on windows of 8 / 3 words"),
    ],
)
def test_a_model_setting_that_cannot_be_used_is_exit_2_before_anything_is_written(
    env: dict[str, str], tmp_path: Path, db: Database, monkeypatch: pytest.MonkeyPatch, setting: str, value: str,
    message: str,
) -> None:  # fmt: skip
    monkeypatch.setenv(setting, value)
    path = tmp_path / "one.json"
    path.write_text(json.dumps(TRANSCRIPT))
    result = CliRunner().invoke(app, ["analyze", str(path), "--workers", "2"])  # the workers would find it late
    assert result.exit_code == 2 and message in result.stderr, result.output
    with db.engine.connect() as conn:
        assert conn.exec_driver_sql("SELECT count(*) FROM transcripts").scalar() == 0


def test_missing_file_and_help(env: dict[str, str]) -> None:
    result = CliRunner().invoke(app, ["analyze", "/nonexistent.jsonl"])
    assert result.exit_code == 2 and "no such file" in result.stderr
    assert "analyze" in CliRunner().invoke(app, ["--help"]).stdout


def test_records_reach_stdout_while_a_terminal_shows_the_bar_on_stderr(env: dict[str, str], tmp_path: Path) -> None:
    import os
    import pty
    import subprocess
    import sys
    import threading

    path = tmp_path / "two.jsonl"
    path.write_text(json.dumps(TRANSCRIPT) + "\n" + json.dumps(dict(TRANSCRIPT, transcript_id="cli-2")) + "\n")
    out = tmp_path / "out.jsonl"
    main, terminal = pty.openpty()  # stderr is a terminal, stdout a file: `namesake analyze FILE > out.jsonl`
    shown: list[bytes] = []

    def watch() -> None:  # a terminal reads as it goes: unread, the bar's redraws would fill the pty and block
        while True:
            try:
                chunk = os.read(main, 65536)
            except OSError:  # the child exited and its end is closed
                return
            if not chunk:
                return
            shown.append(chunk)

    reader = threading.Thread(target=watch, daemon=True)
    reader.start()
    with out.open("w") as stdout:
        code = subprocess.run(
            [str(Path(sys.executable).parent / "namesake"), "analyze", str(path)],
            stdout=stdout, stderr=terminal, env=os.environ, timeout=300,
        ).returncode  # fmt: skip
    os.close(terminal)
    reader.join(timeout=10)
    os.close(main)
    screen = b"".join(shown).decode(errors="replace")
    assert code == 0
    assert [json.loads(line)["transcript_id"] for line in out.read_text().splitlines()] == ["cli-1", "cli-2"]
    assert "analysing" in screen and "transcript_id" not in screen  # the bar on the terminal, the records not


def test_without_a_terminal_progress_is_plain_lines_and_stdin_is_read_with_dash(
    env: dict[str, str], tmp_path: Path
) -> None:
    import os
    import subprocess
    import sys

    lines = json.dumps(TRANSCRIPT) + "\n" + json.dumps(dict(TRANSCRIPT, transcript_id="cli-2")) + "\n"
    done = subprocess.run(
        [str(Path(sys.executable).parent / "namesake"), "analyze", "-"],
        input=lines, capture_output=True, text=True, env=os.environ, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert [json.loads(line)["transcript_id"] for line in done.stdout.splitlines()] == ["cli-1", "cli-2"]
    assert "analysing: 2/2 (100%)" in done.stderr and "\x1b[" not in done.stderr


def test_version() -> None:
    from namesake import __version__

    result = CliRunner().invoke(app, ["--version"])
    assert result.exit_code == 0 and result.stdout.strip() == f"namesake {__version__}"


def test_db_commands_say_where_the_schema_is_and_refuse_what_cannot_be_done(env: dict[str, str]) -> None:
    from namesake.adapters.db import revisions

    head = revisions()[-1]
    current = CliRunner().invoke(app, ["db", "current"])
    assert current.exit_code == 0 and current.stdout.strip() == f"{head} (head {head}, up to date)"
    unknown = CliRunner().invoke(app, ["db", "upgrade", "nonsense"])
    assert unknown.exit_code == 2 and "unknown revision 'nonsense'" in unknown.output
    assert "Traceback" not in unknown.output
    back = CliRunner().invoke(app, ["db", "upgrade", revisions()[0]])
    assert back.exit_code == 2 and "cannot go back" in back.output


def test_a_bad_line_in_the_middle_of_a_batch_is_named_and_the_others_are_analysed(
    env: dict[str, str], tmp_path: Path, db: Database
) -> None:
    path = tmp_path / "batch.jsonl"
    nul = dict(TRANSCRIPT, transcript_id="cli-nul", segments=[{"id": "1", "text": "Rei\u0000ner"}])
    theirs = dict(TRANSCRIPT, transcript_id="cli-theirs", user_id="bob")
    last = dict(TRANSCRIPT, transcript_id="cli-last")
    first = CliRunner().invoke(app, ["analyze", "-"], input=json.dumps(dict(theirs, user_id="ann")) + "\n")
    assert first.exit_code == 0, first.output  # cli-theirs now belongs to ann
    path.write_text(
        "\n".join(json.dumps(t) for t in (TRANSCRIPT, nul, theirs, "not json", last)).replace('"not json"', "{not json")
        + "\n"
    )
    result = CliRunner().invoke(app, ["analyze", str(path)])
    assert result.exit_code == 2
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert [x.get("transcript_id") for x in lines] == ["cli-1", None, "cli-theirs", None, "cli-last"]
    assert [x["error"]["code"] for x in lines if "error" in x] == ["INVALID_INPUT", "CONFLICT", "INVALID_INPUT"]
    assert [x["where"] for x in lines if "error" in x] == [f"{path}:2", f"{path}:3", f"{path}:4"]
    assert f"{path}:2: segments[0].text: a NUL character is not accepted" in result.stderr
    assert f"{path}:3: transcript 'cli-theirs' belongs to another user" in result.stderr
    assert "3 of 5 transcripts could not be analysed" in result.stderr
    with db.engine.connect() as conn:
        kept = conn.exec_driver_sql("SELECT id FROM transcripts ORDER BY id").scalars().all()
    assert kept == ["cli-1", "cli-last", "cli-theirs"]


def test_apply_writes_the_bundled_samples_as_a_reader_would_correct_them(env: dict[str, str], tmp_path: Path) -> None:
    from importlib import resources

    for name in ("meeting_en.json", "meeting_fr.json"):
        raw = resources.files("namesake.samples").joinpath(name).read_text(encoding="utf-8")
        path = tmp_path / name
        path.write_text(raw)
        plain = CliRunner().invoke(app, ["analyze", str(path)])
        applied = CliRunner().invoke(app, ["analyze", str(path), "--apply"])
        assert plain.exit_code == applied.exit_code == 0, applied.output
        prediction = json.loads(plain.stdout.splitlines()[0])
        given = json.loads(raw)
        by_hand = {}
        for seg in given["segments"]:
            text = seg["text"]
            mine = [s for s in prediction["suggestions"] if s["segment_id"] == seg["id"]]
            autos = [s for s in mine if s["status"] == "auto_applied"]
            for s in sorted(autos, key=lambda s: -s["start_char"]):
                text = text[: s["start_char"]] + s["final"] + text[s["end_char"] :]
            by_hand[seg["id"]] = text
        out = json.loads(applied.stdout.splitlines()[0])
        assert out["transcript_id"] == given["transcript_id"]
        assert {s["id"]: s["text"] for s in out["segments"]} == by_hand
        assert {s["id"]: s["text"] for s in prediction["corrected_segments"]} == by_hand
        assert any(by_hand[s["id"]] != s["text"] for s in given["segments"])  # something was corrected


def test_an_id_the_api_could_never_address_is_exit_2_and_writes_nothing(
    env: dict[str, str], tmp_path: Path, db: Database
) -> None:
    path = tmp_path / "one.json"
    path.write_text(json.dumps(TRANSCRIPT))
    for args in (["analyze", str(path), "--user", "../../etc"], ["users", "erase", "a/b"],
                 ["vocab", "export", "--user", "x y", "--format", "json"]):  # fmt: skip
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 2 and "is not an id" in result.stderr, args
    with db.engine.connect() as conn:
        assert conn.exec_driver_sql("SELECT count(*) FROM users").scalar() == 0


def test_a_transcript_sent_with_a_tenants_key_is_exported_by_the_id_its_sender_knows(
    env: dict[str, str], tmp_path: Path
) -> None:
    path = tmp_path / "t.json"
    path.write_text(json.dumps(dict(TRANSCRIPT, transcript_id="acme~q3-review")))  # as a tenant key stores it
    assert CliRunner().invoke(app, ["analyze", str(path)]).exit_code == 0
    bare = CliRunner().invoke(app, ["transcripts", "export", "q3-review", "--format", "txt"])
    assert bare.exit_code == 1 and "--tenant" in bare.stderr  # not found, and how to name it
    named = CliRunner().invoke(app, ["transcripts", "export", "q3-review", "--tenant", "acme", "--format", "txt"])
    assert named.exit_code == 0, named.stderr
    assert (
        named.stdout == CliRunner().invoke(app, ["transcripts", "export", "acme~q3-review", "--format", "txt"]).stdout
    )
    both = CliRunner().invoke(app, ["transcripts", "export", "acme~q3-review", "--tenant", "acme"])
    assert both.exit_code == 2


def test_counts_are_said_in_the_singular_and_local_says_when_it_is_refused(env: dict[str, str], tmp_path: Path) -> None:
    path = tmp_path / "one.jsonl"
    path.write_text('{"transcript_id": "b"}\n')
    result = CliRunner().invoke(app, ["analyze", str(path)])
    assert result.exit_code == 2 and "1 of 1 transcript could not be analysed" in result.stderr
    table = tmp_path / "t.json"
    table.write_text(json.dumps(dict(TRANSCRIPT, segments=[{"id": "1", "text": "the Cytova team"}])))
    shown = CliRunner().invoke(app, ["analyze", str(table), "--format", "table"])
    assert shown.exit_code == 0 and "1 suggestion" in shown.stdout and "1 suggestions" not in shown.stdout
    helped = CliRunner().invoke(app, ["analyze", "--help"], env={"COLUMNS": "200"})
    assert "refused, exit 1, while `namesake serve` holds this data dir's" in " ".join(helped.stdout.split())
