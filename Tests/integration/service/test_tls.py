"""Certificates are verified: a homeserver behind TLS with a certificate from an authority this
computer does not trust is refused with a sentence, before any password is sent; trusted through
the standard SSL_CERT_FILE, the same server is accepted and a share arrives.

The homeserver is a real Synapse behind a TLS-terminating proxy on loopback, with a certificate
made for 127.0.0.1 by a test authority (openssl)."""

from __future__ import annotations

import ssl
import subprocess
from pathlib import Path

import pytest

from ferryenv import EX_OK
from hostileproxy import HostileProxy
from matrixflow import sign_in_call

LOGIN = r"/_matrix/client/v3/login"


def make_authority(folder: Path) -> tuple[Path, Path, Path]:
    """(ca.pem, server.pem, server.key): a test authority and a certificate it issued for 127.0.0.1."""
    folder.mkdir(parents=True, exist_ok=True)

    def run(*args: str) -> None:
        subprocess.run(["openssl", *args], check=True, capture_output=True, timeout=60, cwd=folder)

    curve = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    run("req", "-x509", *curve, "-keyout", "ca.key", "-out", "ca.pem", "-days", "2",
        "-subj", "/CN=Ferry Test Authority",
        "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign")
    run("req", *curve, "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=127.0.0.1")
    (folder / "server.ext").write_text("subjectAltName=IP:127.0.0.1,DNS:localhost\n"
                                       "basicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n")
    run("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
        "-out", "server.pem", "-days", "2", "-extfile", "server.ext")
    return folder / "ca.pem", folder / "server.pem", folder / "server.key"


@pytest.fixture(scope="module")
def tls_homeserver(homeserver, tmp_path_factory):
    """(proxy, ca.pem): Synapse behind https on loopback, certified by a test authority."""
    authority, certificate, key = make_authority(tmp_path_factory.mktemp("authority"))
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(certificate, key)
    proxy = HostileProxy(homeserver).start(tls=context)
    yield proxy, authority
    proxy.stop()


def test_a_certificate_from_an_unknown_authority_is_refused_before_the_password_is_sent(
        new_session, homeserver, tls_homeserver):
    proxy, _ = tls_homeserver
    user = homeserver.new_user("untrusted")
    session = new_session()
    before = [entry for entry in proxy.log if LOGIN in entry[1]]

    reply = sign_in_call(session, homeserver=proxy.base_url, user=user.user_id, password=user.password)

    assert not reply.ok
    assert "certificate is not trusted" in reply.error_message, reply.error_message
    # Nothing got through the handshake: no login request reached the server
    assert [entry for entry in proxy.log if LOGIN in entry[1]] == before
    assert session.ferry("status", "--json").returncode == EX_OK
    session.stop()


def test_the_same_server_trusted_through_ssl_cert_file_signs_in_and_delivers(
        new_session, homeserver, tls_homeserver):
    proxy, authority = tls_homeserver
    user = homeserver.new_user("trusted")
    room = homeserver.create_room(user.token, name="Behind TLS")
    session = new_session(SSL_CERT_FILE=str(authority))

    sign_in_call(session, homeserver=proxy.base_url, user=user.user_id, password=user.password).expect_ok()
    done = session.ferry("text", "over verified TLS", "--to", room)

    assert done.returncode == EX_OK, done.stderr
    assert "over verified TLS" in [e["content"].get("body") for e in homeserver.messages(user.token, room)]
    session.stop()
