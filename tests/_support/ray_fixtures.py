"""Helpers for the Ray executor tests and perf/ray_scaling.py.

Imported by Ray workers too (``RayExecutor(imports=["tests._support.ray_fixtures"])``), so
the proposers below register in every worker process.
"""

from __future__ import annotations

import json
import os
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from groundeval.grounding._protocol import Proposal, ProposeRequest, register_proposer
from groundeval.state import Element
from tests._support.fakeapi import openai_body, openai_request_parts


@register_proposer("test.die_once")
class DieOnce:
    """Kills its worker process the first time (no marker file yet), then proposes one box."""

    name = "test.die_once"

    async def propose(self, request: ProposeRequest) -> Proposal:
        marker = Path(request.spec.params["marker"])
        if not marker.exists():
            marker.write_text(str(os.getpid()))
            os._exit(1)  # the worker dies mid-item, as an OOM kill or a lost node would
        return Proposal([Element(id=1, kind="box", xyxy_px=[2, 2, 12, 12])])


@register_proposer("test.spin")
class Spin:
    """Burns ``params.seconds`` of CPU in pure Python (holds the GIL), then proposes one box."""

    name = "test.spin"

    async def propose(self, request: ProposeRequest) -> Proposal:
        end = time.thread_time() + float(request.spec.params.get("seconds", 0.1))
        x = 0
        while time.thread_time() < end:
            x = (x * 31 + 7) % 1_000_003
        return Proposal([Element(id=1, kind="box", xyxy_px=[2, 2, 12, 12])], params={"x": x})


class FakeChatServer:
    """An OpenAI-compatible chat server on 127.0.0.1 answering every question it finds.

    A question whose id ends in ``n`` is answered no, every other yes. Each request's
    arrival time (``time.monotonic``) is kept in ``times``; ``delay_s`` is slept before
    answering, like a model would.
    """

    def __init__(self, delay_s: float = 0.0) -> None:
        self.delay_s = delay_s
        self.times: list[float] = []
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                with server._lock:
                    server.times.append(time.monotonic())
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                _, prompt = openai_request_parts(body)
                if server.delay_s:
                    time.sleep(server.delay_s)
                ids = [part.split("]", 1)[0] for part in prompt.split("[id=")[1:]]
                answers = [{"id": i, "result": not i.endswith("n"), "reason": "fake"} for i in ids]
                data = json.dumps(openai_body(json.dumps({"answers": answers}))).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        """Base URL for ``openai:<model>@<url>``."""
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    @property
    def calls(self) -> int:
        """Requests received so far."""
        with self._lock:
            return len(self.times)

    def __enter__(self) -> FakeChatServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
