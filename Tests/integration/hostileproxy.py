"""A homeserver that misbehaves on purpose: a small HTTP proxy in front of a real Synapse that
answers chosen requests itself (any status, body and headers, or a stall) and passes everything
else through untouched. Ferry signs in through the proxy's URL, so every request it makes meets it.

    proxy = HostileProxy(server).start()
    proxy.answer("PUT", r"/send/m\\.room\\.message/", status=429,
                 body={"errcode": "M_LIMIT_EXCEEDED", "retry_after_ms": 2**63 - 1}, times=1)
    ... sign in with proxy.base_url ...
    proxy.stop()

Only the standard library: what checks Ferry never shares Ferry's code."""

from __future__ import annotations

import http.client
import http.server
import json
import re
import ssl
import threading
import time
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Rule:
    method: str
    path: re.Pattern
    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    stall: float = 0.0
    times: int = 1
    passthrough: bool = False
    hold: threading.Event | None = None
    throttle: int = 0
    stop_reading_after: int = 0
    hold_answer: threading.Event | None = None
    hits: int = 0
    done: int = 0


class HostileProxy:
    def __init__(self, upstream) -> None:
        self.upstream = upstream
        self.rules: list[Rule] = []
        self.lock = threading.Lock()
        self.log: list[tuple[str, str, int]] = []
        # For a chaos run: given (method, path) of a request no rule took, returns a fault to apply
        # ("429", "429-huge", "500", "drop-before", "drop-after", "stall") or None to pass it on.
        self.chaos = None
        self.faults: dict[str, int] = {}
        self._server: http.server.ThreadingHTTPServer | None = None
        self._scheme = "http"

    @property
    def base_url(self) -> str:
        return f"{self._scheme}://127.0.0.1:{self._server.server_address[1]}"

    def answer(self, method: str, path: str, status: int = 200, body: Any = None, headers: dict[str, str] | None = None,
               stall: float = 0.0, times: int = 1, passthrough: bool = False, hold: threading.Event | None = None,
               throttle: int = 0, stop_reading_after: int = 0, hold_answer: threading.Event | None = None) -> Rule:
        """Answers the next `times` requests matching `method` and the `path` regex itself; or, with
        `passthrough`, holds each (until `hold` is set) and then passes it on to the server.
        `throttle` reads the request body at that many bytes a second; `stop_reading_after` stops
        reading it after that many bytes and drops the connection after `stall` seconds;
        `hold_answer` passes the request on at once and holds the server's answer until it is set.
        `hits` counts the requests met, `done` those answered."""
        rule = Rule(method, re.compile(path), status, body, headers or {}, stall, times, passthrough, hold,
                    throttle, stop_reading_after, hold_answer)
        with self.lock:
            self.rules.append(rule)
        return rule

    def _take(self, method: str, path: str) -> Rule | None:
        with self.lock:
            for rule in self.rules:
                if rule.method == method and rule.path.search(path) and rule.hits < rule.times:
                    rule.hits += 1
                    return rule
        return None

    def start(self, tls: "ssl.SSLContext | None" = None) -> "HostileProxy":
        """Listens on loopback; with `tls`, speaks https with that server context (the handshake
        happens in the connection's own thread, so a client refusing the certificate fails only it)."""
        proxy = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:
                pass

            def _handle(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                rule = proxy._take(self.command, self.path)
                if rule is not None and rule.stop_reading_after:
                    self.rfile.read(rule.stop_reading_after)
                    time.sleep(rule.stall)
                    rule.done += 1
                    self.close_connection = True
                    return
                if rule is not None and rule.throttle:
                    parts, left, step = [], length, max(1, rule.throttle // 10)
                    while left:
                        parts.append(self.rfile.read(min(step, left)))
                        left -= len(parts[-1])
                        time.sleep(0.1)
                    body = b"".join(parts)
                else:
                    body = self.rfile.read(length) if length else b""
                fault = proxy.chaos(self.command, self.path) if rule is None and proxy.chaos else None
                if fault:
                    with proxy.lock:
                        proxy.faults[fault] = proxy.faults.get(fault, 0) + 1
                if fault in ("429", "429-huge", "500"):
                    huge = fault == "429-huge"
                    rule = Rule(self.command, re.compile(""), status=500 if fault == "500" else 429,
                                body={"errcode": "M_UNKNOWN" if fault == "500" else "M_LIMIT_EXCEEDED",
                                      "error": "chaos", "retry_after_ms": 2**63 - 1 if huge else 200})
                elif fault == "drop-before":
                    self.close_connection = True
                    return
                elif fault == "stall":
                    time.sleep(3)
                if rule is not None and rule.passthrough:
                    if rule.hold is not None:
                        rule.hold.wait(120)
                elif rule is not None:
                    if rule.stall:
                        time.sleep(rule.stall)
                    data = rule.body if isinstance(rule.body, bytes) else json.dumps(rule.body).encode() \
                        if rule.body is not None else b"{}"
                    self.send_response(rule.status)
                    for name, value in {"Content-Type": "application/json", **rule.headers}.items():
                        self.send_header(name, value)
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                    proxy.log.append((self.command, self.path, rule.status))
                    rule.done += 1
                    return
                connection = http.client.HTTPConnection("127.0.0.1", proxy.upstream.port, timeout=120)
                try:
                    headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "connection")}
                    connection.request(self.command, self.path, body=body, headers=headers)
                    answer = connection.getresponse()
                    data = answer.read()
                finally:
                    connection.close()
                if fault == "drop-after":
                    # The server did it; the client never hears: the case transaction ids exist for.
                    self.close_connection = True
                    return
                if rule is not None and rule.hold_answer is not None:
                    rule.done += 1
                    rule.hold_answer.wait(120)
                self.send_response(answer.status)
                for name, value in answer.getheaders():
                    if name.lower() not in ("transfer-encoding", "connection", "content-length"):
                        self.send_header(name, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                proxy.log.append((self.command, self.path, answer.status))
                if rule is not None:
                    rule.done += 1

            do_GET = do_POST = do_PUT = do_DELETE = _handle

        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        if tls is not None:
            self._server.socket = tls.wrap_socket(self._server.socket, server_side=True,
                                                  do_handshake_on_connect=False)
            self._scheme = "https"
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
