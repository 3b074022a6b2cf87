"""Sign-in talks only to the server the person meant, safely: plain http:// to another computer is
refused with a sentence before anything is sent, and so is a `.well-known` that points there.

"Nothing is sent" is checked for real: a listener on this machine's own non-loopback address (the
address another computer would be) counts every connection Ferry makes to it."""

from __future__ import annotations

import socket
import threading

import pytest

from ferryenv import EX_UNAVAILABLE, variant
from matrixflow import get_property, sign_in_call


def non_loopback_address() -> str:
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        probe.connect(("10.255.255.255", 1))  # no packet is sent: this only picks the outgoing address
        return probe.getsockname()[0]
    except OSError:
        return ""
    finally:
        probe.close()


class Listener:
    """Accepts and counts connections on every address of this machine."""

    def __init__(self) -> None:
        self.socket = socket.socket()
        self.socket.bind(("0.0.0.0", 0))
        self.socket.listen(16)
        self.port = self.socket.getsockname()[1]
        self.connections = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                connection, _ = self.socket.accept()
            except OSError:
                return
            self.connections += 1
            connection.close()

    def close(self) -> None:
        self.socket.close()


def test_plain_http_to_another_computer_is_refused_before_anything_is_sent(fresh_bus):
    address = non_loopback_address()
    if not address or address.startswith("127."):
        pytest.skip("this machine has no address but loopback")
    listener = Listener()
    server = f"http://{address}:{listener.port}"

    # When a client asks for the login flows there, signs in there, and the command line tries it too
    flows = fresh_bus.gdbus_call("GetLoginFlows", variant("s", server))
    signin = sign_in_call(fresh_bus, homeserver=server, user="@me:ferry.test", password="pw")
    done = fresh_bus.ferry("login", "--homeserver", server, "--user", "@me:ferry.test", "--password-stdin", input="pw\n")

    # Then each is refused, saying why (https://), nobody is signed in, and no connection was made
    assert "https://" in flows.expect_error("HomeserverUnreachable")
    assert "https://" in signin.expect_error("HomeserverUnreachable")
    assert done.returncode == EX_UNAVAILABLE and "https://" in done.stderr, done.stderr
    assert get_property(fresh_bus, "SignedIn") is False
    assert listener.connections == 0, "Ferry connected to a plain-http address on another computer"
    listener.close()
