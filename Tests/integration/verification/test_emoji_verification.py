"""Ferry's device verified by comparing emoji with another of its owner's devices (m.sas.v1).

The other device is matrix-nio 0.25 (its Sas over libolm, its own OlmMachine deciding what to send)
signed in as the same user on a real Synapse: every message goes through the homeserver as
to-device messages, both ways, and each side checks the other's MACs with its own code. Driven
from both sides: Ferry starts with nio's device (nio knows no request, only a start), and nio
starts while Ferry waits after asking all of the person's devices.

nio has no cross-signing, so after nio says the verification held, the test does what Element
does once its person confirmed: it signs Ferry's device with the account's self-signing key
(crosssigning.py, keys of our own). Ferry then learns from the server that its device is verified.
"""

from __future__ import annotations

import fcntl
import json
import os
import pty
import select
import subprocess
import termios
import time

import pytest
from gi.repository import GLib

from emojiflow import NIO, answer, current, ferry_reaches, nio_receives, nio_sees, pictures, start
from ferryenv import EX_UNAVAILABLE, wait_for
from matrixflow import get_property, sign_in, status_json
from secretstorage import bootstrap


@pytest.fixture
def person(new_session, homeserver, nio_reader):
    """(session, user, Ferry's device id, nio, nio's device id, identity): one person, two devices."""
    def make(**env: str):
        user = homeserver.new_user("emoji")
        session = new_session(**env)
        ferry_device = sign_in(session, homeserver, user)["device-id"]
        identity, _ = bootstrap(homeserver, user)
        nio = nio_reader(NIO, user)
        nio_device = nio.device()["device_id"]
        wait_for(lambda: ferry_device in nio.sas_devices(), timeout=30, what="nio knowing Ferry's device")
        return session, user, ferry_device, nio, nio_device, identity
    return make


def test_ferry_starts_with_nios_device_and_both_see_the_same_emoji(person, homeserver):
    session, user, ferry_device, nio, nio_device, identity = person()
    assert status_json(session)["device_verification"] == "unverified"

    # When Ferry starts with nio's device, and nio's person accepts
    started = start(session, nio_device).expect_ok()[0]
    assert (started["state"], started["device-id"]) == ("waiting", nio_device)
    incoming = nio_sees(nio, lambda sas: not sas["we_started"] and sas["device"] == ferry_device)
    nio.sas_accept(incoming["transaction_id"])

    # Then both show seven emoji (nio once it has Ferry's key and answered with its own), the
    # same ones in the same order
    theirs = nio_sees(nio, lambda sas: sas["emoji"])
    shown = ferry_reaches(session, "comparing")
    assert len(shown["emoji"]) == 7 and len(shown["emoji-names"]) == 7 and len(shown["decimal"].split()) == 3
    assert pictures(shown["emoji"]) == pictures([picture for picture, _ in theirs["emoji"]])

    # When both people say they match
    nio.sas_confirm(incoming["transaction_id"])
    answered = answer(session, started["id"], True)
    assert answered["state"] in ("confirmed", "done")

    # Then nio holds Ferry's MAC, Ferry holds nio's, and the verification is done on both sides
    assert nio_sees(nio, lambda sas: sas["verified"])["device"] == ferry_device
    ferry_reaches(session, "done")
    # And once the other device signs Ferry's (as Element does for its owner's devices), Ferry says so
    identity.verify_device(homeserver, user.token, ferry_device)
    done = wait_for(lambda: (lambda v: v if v.get("verification") == "verified" else None)(current(session)),
                    timeout=30, interval=0.2, what="Ferry learning it is verified")
    assert done["device-id"] == nio_device
    assert get_property(session, "DeviceVerification") == "verified"


def test_nio_starts_while_ferry_asks_every_device(person, homeserver):
    session, user, ferry_device, nio, nio_device, identity = person()
    # Given Ferry asked all of the person's devices (nio knows no request and ignores it)
    started = start(session).expect_ok()[0]
    assert (started["state"], started["device-id"]) == ("waiting", "")

    # When nio starts with Ferry's device instead, Ferry accepts and the keys go both ways
    transaction = nio.sas_start(ferry_device)
    theirs = nio_sees(nio, lambda sas: sas["emoji"])
    shown = ferry_reaches(session, "comparing")
    assert shown["device-id"] == nio_device and shown["id"] == started["id"]
    assert pictures(shown["emoji"]) == pictures([picture for picture, _ in theirs["emoji"]])

    # And with both confirmed in the other order (Ferry first), both sides finish
    assert answer(session, started["id"], True)["state"] == "confirmed"
    nio.sas_confirm(transaction)
    assert nio_sees(nio, lambda sas: sas["verified"])["transaction_id"] == transaction
    ferry_reaches(session, "done")


def test_emoji_that_do_not_match_on_ferry_cancel_on_nio(person):
    session, user, ferry_device, nio, nio_device, identity = person()
    started = start(session, nio_device).expect_ok()[0]
    incoming = nio_sees(nio, lambda sas: not sas["we_started"])
    nio.sas_accept(incoming["transaction_id"])
    nio_sees(nio, lambda sas: sas["emoji"])
    ferry_reaches(session, "comparing")

    # When the person says the emoji differ
    ended = answer(session, started["id"], False)

    # Then nothing is verified on either side, and nio was told why
    assert ended["state"] == "cancelled" and "do not match" in ended["reason"]
    assert nio_receives(nio, "m.key.verification.cancel")["code"] == "m.mismatched_sas"
    assert not nio_sees(nio, lambda sas: sas["canceled"])["verified"]
    assert status_json(session)["device_verification"] == "unverified"


def test_a_cancel_on_the_other_device_is_said(person):
    session, user, ferry_device, nio, nio_device, identity = person()
    started = start(session).expect_ok()[0]
    transaction = nio.sas_start(ferry_device)
    nio_sees(nio, lambda sas: sas["emoji"])
    ferry_reaches(session, "comparing")

    # When nio's person says the emoji differ
    nio.sas_cancel(transaction, mismatch=True)

    # Then Ferry says the other device found them different, and an answer that comes too late
    # (the person looked while it ended) is told how it ended
    ended = ferry_reaches(session, "cancelled")
    assert ended["reason"] == "Your other device says the emoji do not match: nothing was verified."
    assert answer(session, started["id"], True) == ended


def test_nobody_answering_times_out_and_the_other_device_is_told(person):
    session, user, ferry_device, nio, nio_device, identity = person(FERRY_VERIFICATION_TIMEOUT_SECONDS="4")
    start(session, nio_device).expect_ok()
    # nio takes the start (its Sas exists) but its person never accepts
    nio_sees(nio, lambda sas: not sas["we_started"])
    ended = ferry_reaches(session, "cancelled", timeout=30)
    assert ended["reason"] == "Nobody answered within ten minutes; nothing was verified."
    assert nio_receives(nio, "m.key.verification.cancel")["code"] == "m.timeout"


def test_what_cannot_be_verified_is_said(person, new_session, homeserver):
    session, user, ferry_device, nio, nio_device, identity = person()
    assert "not one of your account's devices" in start(session, "NOSUCHDEVICE").expect_error("CannotVerify")
    started = start(session, nio_device).expect_ok()[0]
    # One at a time
    assert "another verification" in start(session).expect_error("CannotVerify")
    # No answer before the emoji are there, nor for another id
    early = session.gdbus_call("AnswerEmojiVerification", GLib.Variant("s", started["id"]), GLib.Variant("b", True))
    assert "not there to compare" in early.expect_error("CannotVerify")
    other = session.gdbus_call("AnswerEmojiVerification", GLib.Variant("s", "nope"), GLib.Variant("b", True))
    other.expect_error("CannotVerify")
    cancelled = session.gdbus_call("CancelEmojiVerification", GLib.Variant("s", started["id"])).expect_ok()[0]
    assert cancelled["state"] == "cancelled"
    assert nio_receives(nio, "m.key.verification.cancel")["code"] == "m.user"

    # An account with no other device has nothing to compare with
    alone = homeserver.new_user("alone")
    lonely = new_session()
    sign_in(lonely, homeserver, alone)
    assert "no other device" in start(lonely).expect_error("CannotVerify")


# -- ferry verify --emoji --

def spawn_ferry(session, *args: str, terminal: bool = False) -> tuple[subprocess.Popen, int | None]:
    """`ferry` running on its own: with pipes, or on a pseudo-terminal (the master fd returned)."""
    argv = [str(session.prefix / "bin" / "ferry"), *args]
    if not terminal:
        return subprocess.Popen(argv, env=dict(session.env), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True), None
    master, slave = pty.openpty()

    def own_terminal() -> None:
        # A session of its own whose controlling terminal is the pty: ^C there is a SIGINT.
        os.setsid()
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)

    process = subprocess.Popen(argv, env=dict(session.env), stdin=slave, stdout=slave, stderr=slave,
                               preexec_fn=own_terminal)
    os.close(slave)
    return process, master


def read_terminal(master: int, until: str, timeout: float = 30) -> str:
    """What the command wrote to its terminal, read until `until` appears."""
    seen = b""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and until.encode() not in seen:
        ready, _, _ = select.select([master], [], [], 0.2)
        if ready:
            try:
                seen += os.read(master, 4096)
            except OSError:
                break
    text = seen.decode(errors="replace")
    assert until in text, f"the terminal never showed {until!r}; it showed:\n{text}"
    return text


def test_ferry_verify_emoji_with_json_lines_and_an_answer_on_standard_input(person, homeserver):
    session, user, ferry_device, nio, nio_device, identity = person()
    process, _ = spawn_ferry(session, "verify", "--emoji", "--device", nio_device, "--json")
    try:
        assert json.loads(process.stdout.readline())["state"] == "waiting"
        incoming = nio_sees(nio, lambda sas: not sas["we_started"])
        nio.sas_accept(incoming["transaction_id"])
        theirs = nio_sees(nio, lambda sas: sas["emoji"])
        shown = json.loads(process.stdout.readline())
        assert shown["state"] == "comparing" and shown["device_id"] == nio_device
        assert pictures(shown["emoji"]) == pictures([picture for picture, _ in theirs["emoji"]])
        assert len(shown["emoji_names"]) == 7

        nio.sas_confirm(incoming["transaction_id"])
        process.stdin.write("yes\n")
        process.stdin.flush()
        nio_sees(nio, lambda sas: sas["verified"])
        identity.verify_device(homeserver, user.token, ferry_device)
        out, err = process.communicate(timeout=60)
    finally:
        process.kill()
    assert process.returncode == 0, err
    assert json.loads(out.splitlines()[-1])["verification"] == "verified"
    assert status_json(session)["device_verification"] == "verified"


def test_ferry_verify_emoji_on_a_terminal_shows_the_emoji_and_takes_no(person):
    session, user, ferry_device, nio, nio_device, identity = person()
    process, master = spawn_ferry(session, "verify", "--emoji", terminal=True)
    try:
        read_terminal(master, "Accept the request on one of them")
        transaction = nio.sas_start(ferry_device)
        theirs = nio_sees(nio, lambda sas: sas["emoji"])
        screen = read_terminal(master, "Do they match? [y/n]")
        # Every emoji with its name, in nio's order
        for picture, _ in theirs["emoji"]:
            assert picture.replace("\ufe0f", "") in screen.replace("\ufe0f", "")
        assert "nioreader" in screen

        os.write(master, b"n\n")
        screen = read_terminal(master, "nothing was verified")
        assert process.wait(timeout=30) == EX_UNAVAILABLE
    finally:
        process.kill()
        os.close(master)
    assert "You said the emoji do not match" in screen
    assert nio_receives(nio, "m.key.verification.cancel")["code"] == "m.mismatched_sas"


def test_ctrl_c_cancels_on_both_devices(person):
    session, user, ferry_device, nio, nio_device, identity = person()
    process, master = spawn_ferry(session, "verify", "--emoji", "--device", nio_device, terminal=True)
    try:
        read_terminal(master, "Waiting for")
        nio_sees(nio, lambda sas: not sas["we_started"])
        os.write(master, b"\x03")
        read_terminal(master, "cancelled")
        assert process.wait(timeout=30) == 130
    finally:
        process.kill()
        os.close(master)
    assert nio_receives(nio, "m.key.verification.cancel")["code"] == "m.user"
    assert current(session)["state"] == "cancelled"


# -- the request and ready that current clients send first (nio sends them here as raw messages) --

def test_a_ready_to_ferrys_request_goes_on_with_that_device_and_the_others_are_told(person, nio_reader):
    session, user, ferry_device, nio, nio_device, identity = person()
    second = nio_reader(NIO, user)
    second_device = second.device()["device_id"]
    wait_for(lambda: ferry_device in second.sas_devices(), timeout=30, what="the second device knowing Ferry's")

    # Given Ferry asked every device of the person
    started = start(session).expect_ok()[0]
    request = nio_receives(nio, "m.key.verification.request")
    assert request["from_device"] == ferry_device and "m.sas.v1" in request["methods"]
    assert request["transaction_id"] == started["id"]
    assert nio_receives(second, "m.key.verification.request")["transaction_id"] == started["id"]

    # When one device says it is ready (as Element does once its person accepts)
    nio.send_to_device("m.key.verification.ready", ferry_device, {
        "transaction_id": started["id"], "from_device": nio_device, "methods": ["m.sas.v1"]})

    # Then Ferry starts with that one, in the request's transaction, and nio's own Sas takes it on
    incoming = nio_sees(nio, lambda sas: not sas["we_started"])
    assert incoming["transaction_id"] == started["id"]
    # And the other device is told that another answered
    assert nio_receives(second, "m.key.verification.cancel")["code"] == "m.accepted"
    nio.sas_accept(started["id"])
    theirs = nio_sees(nio, lambda sas: sas["emoji"])
    shown = ferry_reaches(session, "comparing")
    assert shown["device-id"] == nio_device
    assert pictures(shown["emoji"]) == pictures([picture for picture, _ in theirs["emoji"]])
    nio.sas_confirm(started["id"])
    answer(session, started["id"], True)
    assert nio_sees(nio, lambda sas: sas["verified"])["transaction_id"] == started["id"]
    ferry_reaches(session, "done")


def test_a_request_from_another_device_is_answered_with_ready_and_a_start(person):
    session, user, ferry_device, nio, nio_device, identity = person()
    started = start(session).expect_ok()[0]
    # When the other device sends a request of its own while Ferry waits
    transaction = "nio-request-1"
    nio.send_to_device("m.key.verification.request", ferry_device, {
        "transaction_id": transaction, "from_device": nio_device, "methods": ["m.sas.v1"],
        "timestamp": int(time.time() * 1000)})
    # Then Ferry is ready and starts in that transaction; the emoji agree
    assert nio_receives(nio, "m.key.verification.ready")["transaction_id"] == transaction
    incoming = nio_sees(nio, lambda sas: not sas["we_started"])
    assert incoming["transaction_id"] == transaction
    nio.sas_accept(transaction)
    theirs = nio_sees(nio, lambda sas: sas["emoji"])
    shown = ferry_reaches(session, "comparing")
    assert shown["id"] == started["id"] and shown["device-id"] == nio_device
    assert pictures(shown["emoji"]) == pictures([picture for picture, _ in theirs["emoji"]])


def test_messages_from_another_user_or_an_old_request_change_nothing(person, homeserver, nio_reader):
    session, user, ferry_device, nio, nio_device, identity = person()
    stranger_user = homeserver.new_user("stranger")
    stranger = nio_reader(NIO, stranger_user)
    stranger_device = stranger.device()["device_id"]
    started = start(session, nio_device).expect_ok()[0]
    nio_sees(nio, lambda sas: not sas["we_started"])

    # A stranger cancels Ferry's verification, and sends an accept and a request of their own
    stranger.send_to_device("m.key.verification.cancel", ferry_device,
                            {"transaction_id": started["id"], "code": "m.user", "reason": "gotcha"}, user=user.user_id)
    stranger.send_to_device("m.key.verification.accept", ferry_device,
                            {"transaction_id": started["id"], "method": "m.sas.v1"}, user=user.user_id)
    stranger.send_to_device("m.key.verification.request", ferry_device, {
        "transaction_id": "stranger", "from_device": stranger_device, "methods": ["m.sas.v1"],
        "timestamp": int(time.time() * 1000)}, user=user.user_id)
    # And the person's own device replays a request ten minutes old
    nio.send_to_device("m.key.verification.request", ferry_device, {
        "transaction_id": "old", "from_device": nio_device, "methods": ["m.sas.v1"],
        "timestamp": int(time.time() * 1000) - 11 * 60 * 1000})
    time.sleep(3)
    assert current(session)["state"] == "waiting"
    # The real accept still goes through
    nio.sas_accept(started["id"])
    nio_sees(nio, lambda sas: sas["emoji"])
    ferry_reaches(session, "comparing")
    assert not [e for e in stranger.sas_sync(0)["to_device"] if e["type"].startswith("m.key.verification.")]


def test_declining_the_request_on_the_other_device_ends_it(person, nio_reader):
    session, user, ferry_device, nio, nio_device, identity = person()
    second = nio_reader(NIO, user)
    second.device()
    started = start(session).expect_ok()[0]
    nio_receives(nio, "m.key.verification.request")
    # A decline is a cancel of the request, naming no device (as matrix-rust-sdk sends it)
    nio.send_to_device("m.key.verification.cancel", ferry_device,
                       {"transaction_id": started["id"], "code": "m.user", "reason": "declined"})
    ended = ferry_reaches(session, "cancelled")
    assert ended["reason"] == "The verification was cancelled on your other device; nothing was verified."
    # And the other device asked hears that it is over
    assert nio_receives(second, "m.key.verification.cancel")["transaction_id"] == started["id"]


def test_a_start_left_from_before_is_not_taken(person):
    session, user, ferry_device, nio, nio_device, identity = person()
    # Given a start that waited on the server before the person asked Ferry (an old attempt)
    nio.sas_start(ferry_device)
    started = start(session).expect_ok()[0]
    time.sleep(3)
    # Then Ferry still waits for an answer to its own request
    assert current(session)["state"] == "waiting" and current(session)["id"] == started["id"]
