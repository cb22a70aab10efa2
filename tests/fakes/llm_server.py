"""A small local HTTP server speaking OpenAI chat completions, scripted per test (429s, bad JSON)."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Reply = tuple[int, str]  # (HTTP status, message content or raw body)


@dataclass
class ScriptedLLM:
    """Answers each request with the next scripted reply (or `respond(request)`); records requests."""

    replies: list[Reply] = field(default_factory=list)
    respond: Callable[[dict[str, Any]], Reply] | None = None
    requests: list[dict[str, Any]] = field(default_factory=list)
    raw: bool = False  # when True, reply text is the whole body, not the message content
    retry_after: str | None = None  # sent with every 429

    def next(self, body: dict[str, Any]) -> Reply:
        self.requests.append(body)
        if self.replies:
            return self.replies.pop(0)
        if self.respond is not None:
            return self.respond(body)
        return 200, "{}"


def completion(content: str) -> str:
    """Wrap message content in a chat-completions body."""
    return json.dumps(
        {
            "id": "x",
            "object": "chat.completion",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}}],
        }
    )


@contextmanager
def serve_llm(script: ScriptedLLM) -> Iterator[str]:
    """Run the fake on 127.0.0.1 on a free port; yields its base URL."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", 0))
            body = json.loads(self.rfile.read(length) or b"{}")
            status, text = script.next(body)
            payload = text if (script.raw or status != 200) else completion(text)
            data = payload.encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            if status == 429 and script.retry_after is not None:
                self.send_header("Retry-After", script.retry_after)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()
