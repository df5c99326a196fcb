"""A fake OpenAI-compatible chat server on 127.0.0.1 for tests and benchmarks.

`FakeOpenAI(reply=..., latency=0.1)` serves `/v1/chat/completions` (plain and streaming) and
`/v1/models`; with `chunk_delay` a stream goes out 16 characters at a time and `streams` records
how much of it was sent before the client hung up (a looping reply shows whether it was cancelled); `faults` lets a test script failures per request: a list of "503", "timeout",
"garbage" or None (normal) consumed one per request, or a function of the request number.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable


def fake_embeddings(request: dict) -> dict:
    """Deterministic 16-d vectors from a hash of each input text."""
    import hashlib

    texts = request["input"] if isinstance(request["input"], list) else [request["input"]]
    data = [{"object": "embedding", "index": i,
             "embedding": [b / 255.0 for b in hashlib.sha256(str(t).encode()).digest()[:16]]}
            for i, t in enumerate(texts)]
    return {"object": "list", "data": data, "model": request.get("model"), "usage": {"prompt_tokens": 1, "total_tokens": 1}}


class FakeOpenAI:
    def __init__(self, reply: str | Callable[[dict], str] = '{"interpretations": [], "answer": "fake"}',
                 latency: float = 0.0, faults: list | Callable[[int], str | None] | None = None,
                 hang_seconds: float = 30.0, chunk_delay: float = 0.0, report_usage: bool = True):
        self.reply, self.latency, self.faults, self.hang_seconds = reply, latency, faults, hang_seconds
        self.chunk_delay = chunk_delay  # seconds between streamed chunks (0: the whole stream in one write)
        self.report_usage = report_usage  # False: usage 0, so the client counts the tokens it sent
        self.requests: list[dict] = []
        # per chunk-by-chunk stream: chunks planned (16 characters each, then the end), chunks sent
        # before the client closed the connection, whether it did, and whether the stream is over
        self.streams: list[dict] = []
        self._lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # headers and body go out as two writes: without TCP_NODELAY, Nagle's algorithm and
            # the client's delayed ACK add ~40 ms to every reply, which would swamp latency benches
            disable_nagle_algorithm = True

            def log_message(self, *args):
                pass

            def _send(self, status: int, body: bytes, content_type: str = "application/json"):
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", content_type)
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a simulated timeout): nothing to answer

            def do_GET(self):
                self._send(200, json.dumps({"object": "list", "data": [{"id": "fake", "object": "model"}]}).encode())

            def do_POST(self):
                request = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                if self.path.endswith("/embeddings"):
                    return self._send(200, json.dumps(fake_embeddings(request)).encode())
                fault = fake._next_fault(request)
                if fault == "503":
                    return self._send(503, b'{"error": {"message": "overloaded"}}')
                if fault == "timeout":
                    time.sleep(fake.hang_seconds)
                    return self._send(200, b"{}")
                time.sleep(fake.latency)
                content = "this is not json {" if fault == "garbage" else fake._content(request)
                usage = {"prompt_tokens": 10, "completion_tokens": max(1, len(content.split())), "total_tokens": 0}
                if not fake.report_usage:
                    usage = {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}
                if not request.get("stream"):
                    body = {"id": "x", "object": "chat.completion", "created": 0, "model": "fake", "usage": usage,
                            "choices": [{"index": 0, "finish_reason": "stop",
                                         "message": {"role": "assistant", "content": content}}]}
                    return self._send(200, json.dumps(body).encode())
                events = []
                for start in range(0, len(content), 16):
                    delta = {"role": "assistant", "content": content[start:start + 16]}
                    events.append({"id": "x", "object": "chat.completion.chunk", "created": 0, "model": "fake",
                                   "choices": [{"index": 0, "delta": delta, "finish_reason": None}]})
                events.append({"id": "x", "object": "chat.completion.chunk", "created": 0, "model": "fake",
                               "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}], "usage": usage})
                lines = [f"data: {json.dumps(e)}\n\n" for e in events] + ["data: [DONE]\n\n"]
                if not fake.chunk_delay:
                    return self._send(200, "".join(lines).encode(), "text/event-stream")
                self.send_response(200)  # chunk by chunk, as a real server streams; the connection ends the body
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Connection", "close")
                self.end_headers()
                self.close_connection = True
                stream = {"chunks": len(lines), "sent": 0, "closed_by_client": False, "over": False}
                fake.streams.append(stream)
                try:
                    for line in lines:
                        self.wfile.write(line.encode())
                        self.wfile.flush()
                        stream["sent"] += 1
                        time.sleep(fake.chunk_delay)
                except (BrokenPipeError, ConnectionResetError):
                    stream["closed_by_client"] = True  # the client cancelled: stop generating
                finally:
                    stream["over"] = True

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def _next_fault(self, request: dict) -> str | None:
        with self._lock:
            number = len(self.requests)
            self.requests.append(request)
            if callable(self.faults):
                return self.faults(number)
            return self.faults.pop(0) if self.faults else None

    def _content(self, request: dict) -> str:
        return self.reply(request) if callable(self.reply) else self.reply

    def __enter__(self) -> "FakeOpenAI":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()


def closed_port_url() -> str:
    """An OpenAI-style base URL on 127.0.0.1 where nothing listens (connection refused)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{probe.getsockname()[1]}/v1"
