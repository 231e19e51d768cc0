"""Judge throughput: N items through the real SDK + middleware against a local fake API.

The fake server (a separate process: a small asyncio HTTP/1.1 server on
127.0.0.1) answers every call after a fixed latency. With concurrency C and latency L the
ideal wall time is ceil(N / C) * L; the script prints achieved/ideal efficiency
(ideal / achieved, goal >= 0.90), calls per item and peak RSS of the client.

    .venv/bin/python perf/judge_throughput.py --items 2000 --concurrency 64 --latency 0.2
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import multiprocessing
import os
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests._support.fakeapi

from groundeval.judges import (
    JudgeCall,
    JudgeReply,
    QuestionRef,
    ask_questions,
    build_judge,
    wrap_judge,
)
from groundeval.state import Usage
from tests._support.fakeapi import (
    answers_for,
    gemini_body,
    gemini_request_parts,
    openai_body,
    openai_request_parts,
    tiny_png,
)


class SleepJudge:
    """No SDK, no HTTP: isolates the cost of groundeval's own layers."""

    spec = "null"
    model = "null"

    def __init__(self, latency: float) -> None:
        self.params: dict = {}
        self.latency = latency

    async def generate(self, call: JudgeCall) -> JudgeReply:
        await asyncio.sleep(self.latency)
        return JudgeReply(answers_for(call.prompt), Usage(calls=1))


def reply_for(kind: str, body: bytes) -> bytes:
    """The fake API's answer to one request body: every question answered yes."""
    request = json.loads(body)
    parts = gemini_request_parts if kind == "gemini" else openai_request_parts
    _, text = parts(request)
    reply = answers_for(text)
    return json.dumps(gemini_body(reply) if kind == "gemini" else openai_body(reply)).encode()


def serve(port_queue: multiprocessing.Queue, latency: float, kind: str) -> None:
    """A keep-alive HTTP/1.1 server on asyncio: cheap per request, so the client is measured."""

    async def connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n"):
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value)
                body = await reader.readexactly(length)
                await asyncio.sleep(latency)
                data = reply_for(kind, body)
                writer.write(
                    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                    + f"Content-Length: {len(data)}\r\n\r\n".encode()
                    + data
                )
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    async def main() -> None:
        server = await asyncio.start_server(connection, "127.0.0.1", 0, backlog=512)
        port_queue.put(server.sockets[0].getsockname()[1])
        await server.serve_forever()

    asyncio.run(main())


async def grade(judge, items: int) -> tuple[int, int]:
    image = tiny_png(64, 48)
    questions = [QuestionRef("q1", "Is there a disc?"), QuestionRef("q2", "Is it white?")]

    async def one(i: int) -> int:
        answers, _ = await ask_questions(
            judge, [image], questions, item_id=f"item{i}", prompt=f"item {i}"
        )
        return sum(a.result is True for a in answers.values())

    done = await asyncio.gather(*(one(i) for i in range(items)))
    return sum(done), items * len(questions)


def build(args: argparse.Namespace, url: str):
    layers = {"concurrency": args.concurrency, "retries": 2, "backoff_s": (0.05, 0.5)}
    if args.backend == "null":
        return wrap_judge(SleepJudge(args.latency), **layers)
    spec, options = (
        ("gemini:gemini-2.5-flash", {"base_url": url + "/"})
        if args.backend == "gemini"
        else (f"openai:fake@{url}/v1", {})
    )
    return build_judge(spec, api_key="perf-key-not-secret", timeout_s=30, **layers, **options)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--backend", choices=["gemini", "openai", "null"], default="gemini")
    parser.add_argument("--runs", type=int, default=1, help="repeat and report the median")
    args = parser.parse_args(argv)

    ports: multiprocessing.Queue = multiprocessing.Queue()
    server = multiprocessing.Process(
        target=serve, args=(ports, args.latency, args.backend), daemon=True
    )
    server.start()
    ideal = math.ceil(args.items / args.concurrency) * args.latency
    runs = []
    try:
        url = f"http://127.0.0.1:{ports.get(timeout=10)}"
        for _ in range(args.runs):
            judge = build(args, url)
            cpu0, start = time.process_time(), time.perf_counter()
            yes, asked = asyncio.run(grade(judge, args.items))
            elapsed = time.perf_counter() - start
            runs.append((ideal / elapsed, elapsed, time.process_time() - cpu0, judge.account))
            print(f"run {len(runs)}: {elapsed:.2f} s, efficiency {ideal / elapsed:.3f}")
    finally:
        server.terminate()
        server.join(5)
    efficiency, elapsed, cpu, account = sorted(runs, key=lambda r: r[0])[len(runs) // 2]
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    how = "in-process sleep, no SDK" if args.backend == "null" else "real SDK over 127.0.0.1"
    print(f"backend            {args.backend} ({how})")
    print(
        f"items              {args.items}  concurrency {args.concurrency}  "
        f"latency {args.latency * 1000:.0f} ms  runs {args.runs} (median shown)"
    )
    print(f"answered yes       {yes}/{asked}")
    print(f"wall time          {elapsed:.2f} s   ideal {ideal:.2f} s")
    print(f"efficiency         {efficiency:.3f}  (ideal/achieved, goal >= 0.90)")
    print(
        f"calls per item     {account.total.calls / args.items:.3f}  "
        f"(retries {account.retries}, errors {dict(account.errors)})"
    )
    print(f"throughput         {account.total.calls / elapsed:.1f} calls/s")
    print(
        f"client CPU         {cpu:.2f} s = {1000 * cpu / max(1, account.total.calls):.2f} ms "
        f"per call ({cpu / elapsed:.0%} of one core); load avg {os.getloadavg()[0]:.1f}"
    )
    print(f"peak RSS (client)  {rss_mb:.0f} MB")
    return 0 if yes == asked else 1


if __name__ == "__main__":
    sys.exit(main())
