"""Driving an emoji verification (m.sas.v1) between Ferry, over Share1, and matrix-nio 0.25 as the
person's other device (a nio reader of nioreaders.py); shared by test_emoji_verification.py and
test_ui_emoji.py.
"""

from __future__ import annotations

import time

from gi.repository import GLib

from ferryenv import wait_for

# The reader kind that plays the other device: nio 0.25, its Sas over libolm.
NIO = "nio25"


def start(session, device: str | None = None):
    options = {"device-id": GLib.Variant("s", device)} if device else {}
    return session.gdbus_call("StartEmojiVerification", GLib.Variant("a{sv}", options), timeout=60)


def current(session) -> dict:
    return session.gdbus_call("GetEmojiVerification").expect_ok()[0]


def answer(session, id: str, match: bool) -> dict:
    return session.gdbus_call("AnswerEmojiVerification", GLib.Variant("s", id), GLib.Variant("b", match)).expect_ok()[0]


def ferry_reaches(session, state: str, timeout: float = 30) -> dict:
    return wait_for(lambda: (lambda v: v if v.get("state") == state else None)(current(session)),
                    timeout=timeout, interval=0.2, what=f"Ferry's verification {state}; it is {current(session)}")


def nio_sees(nio, condition, timeout: float = 30) -> dict:
    """Syncs nio (each sync waits up to a second for news) until one of its verifications meets `condition`."""
    deadline = time.monotonic() + timeout
    seen: dict = {}
    while time.monotonic() < deadline:
        seen = nio.sas_sync(1000)["verifications"]
        for transaction, sas in seen.items():
            if condition(sas):
                return {"transaction_id": transaction, **sas}
    raise AssertionError(f"nio never got there; its verifications: {seen}\n{nio.log_tail(40)}")


def nio_receives(nio, event_type: str, timeout: float = 30) -> dict:
    """Syncs nio until a to-device message of `event_type` comes; its content, as sent."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for event in nio.sas_sync(1000)["to_device"]:
            if event["type"] == event_type:
                return event["content"]
    raise AssertionError(f"nio never received {event_type}\n{nio.log_tail(40)}")


def pictures(emoji: list) -> list[str]:
    """The pictures alone (nio's names are older ones: "Wrench" for "Spanner"), without the
    variation selector some tables add."""
    return [picture.replace("\ufe0f", "") for picture in emoji]
