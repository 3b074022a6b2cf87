"""SAS verification (`m.sas.v1`) between FerryCrypto and matrix-nio's own Sas, without a homeserver.

Ferry's side runs in ferry-crypto-probe; nio's in niosas.py, in nio's own virtualenv (nio 0.25 over
libolm, nio 0.26 over vodozemac). The event contents pass between them in memory, as to-device
messages would, and each side is asked what it shows and what it concludes. Both must show the
same emoji and numbers and take each other's MACs; a changed commitment, a swapped key or a
changed MAC must be refused by whichever side can see it.

nio 0.26 as it is cannot complete a verification with a client that follows the spec (its
commitment is hex, its `hkdf-hmac-sha256` MAC is in correct base64), and it shows other emoji than
vodozemac computed (it re-splits vodozemac's seven 6-bit numbers as if they were bytes; its
numbers are right). One test pins that down; the others run it in niosas.py's modes that correct
the two encodings with vodozemac's own functions (see there), and compare Ferry's emoji with
vodozemac's own numbers. nio 0.25 runs as it is, and in a mode that speaks `hkdf-hmac-sha256.v2`
with libolm's fixed base64, so each of Ferry's MAC methods meets both libolm and vodozemac.
"""

from __future__ import annotations

import hashlib
import json
import queue
import subprocess
import threading
import uuid
from pathlib import Path
from typing import Any, Callable

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey

from cryptopeers import b64, unb64
from nioreaders import reader_python

SCRIPT = Path(__file__).resolve().parents[1] / "niosas.py"
TIMEOUT = 30.0

FERRY_USER, FERRY_DEVICE = "@ferry:localhost", "FERRYDEV"
NIO_USER, NIO_DEVICE = "@nio:localhost", "NIODEVICE"

# (virtualenv, mode, the MAC method nio ends up with when Ferry offers both)
PEERS = [
    ("nio25", "as-is", "hkdf-hmac-sha256"),
    ("nio25", "v2", "hkdf-hmac-sha256.v2"),
    ("nio26", "libolm-compat", "hkdf-hmac-sha256"),
    ("nio26", "v2", "hkdf-hmac-sha256.v2"),
]


class NioSas:
    """niosas.py in a virtualenv of nio's: one nio device, its Sas objects by transaction id."""

    def __init__(self, kind: str, mode: str) -> None:
        self.kind, self.mode = kind, mode
        self.process = subprocess.Popen(
            [str(reader_python(kind)), str(SCRIPT), "--user", NIO_USER, "--device", NIO_DEVICE, "--mode", mode],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, bufsize=1,
            env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "PYTHONNOUSERSITE": "1", "PYTHONDONTWRITEBYTECODE": "1"})
        # Read by threads, so that a hung nio fails the test after a timeout instead of blocking it,
        # and its log (stderr) never fills a pipe nobody reads.
        self.answers: queue.Queue[str | None] = queue.Queue()
        self.log: list[str] = []
        threading.Thread(target=self._pump, daemon=True).start()
        threading.Thread(target=lambda: self.log.extend(self.process.stderr), daemon=True).start()
        self.device = self("device")

    def _pump(self) -> None:
        for line in self.process.stdout:
            self.answers.put(line)
        self.answers.put(None)

    def __call__(self, op: str, **fields: Any) -> dict[str, Any]:
        self.process.stdin.write(json.dumps({"op": op, **fields}) + "\n")
        self.process.stdin.flush()
        try:
            line = self.answers.get(timeout=TIMEOUT)
        except queue.Empty:
            raise AssertionError(f"nio ({self.kind}, {self.mode}) gave no answer to {op}\n{''.join(self.log[-30:])}") from None
        assert line is not None, f"nio ({self.kind}, {self.mode}) ended while answering {op}\n{''.join(self.log[-30:])}"
        answer = json.loads(line)
        assert "error" not in answer, f"nio ({self.kind}, {self.mode}), {op}: {answer['error']}\n{''.join(self.log[-30:])}"
        return answer

    def close(self) -> None:
        try:
            self("close")
            self.process.wait(timeout=10)
        except (AssertionError, OSError, subprocess.TimeoutExpired):
            self.process.kill()


@pytest.fixture(scope="module", params=PEERS, ids=lambda peer: f"{peer[0]}-{peer[1]}")
def nio(request):
    kind, mode, mac = request.param
    running = NioSas(kind, mode)
    running.mac_method = mac
    yield running
    running.close()


def ed25519_key() -> str:
    return b64(Ed25519PrivateKey.generate().public_key().public_bytes_raw())


def curve25519_key() -> str:
    return b64(X25519PrivateKey.generate().public_key().public_bytes_raw())


def changed(text: str) -> str:
    """`text` (base64, or libolm's base64-like MAC) with its first character replaced."""
    return ("B" if text[0] == "A" else "A") + text[1:]


Tamper = Callable[[str, dict], dict]


class Run:
    """One verification between Ferry and nio, every message passed through `tamper(sender,
    message)` on the way. Runs until neither side has anything more to send; each side's last
    answer is kept. A side that cancels sends its cancel on, as a client would."""

    def __init__(self, probe, nio: NioSas, ferry_starts: bool, tamper: Tamper | None = None,
                 nio_key_for_ferry: str | None = None) -> None:
        self.probe, self.nio = probe, nio
        self.tamper = tamper or (lambda sender, message: message)
        self.tx = f"t-{uuid.uuid4().hex}"
        self.ferry_master = ed25519_key()
        account = probe("account", user_id=FERRY_USER, device_id=FERRY_DEVICE, count=1)
        self.ferry_device = {"user_id": FERRY_USER, "device_id": FERRY_DEVICE, "ed25519": account["ed25519"],
                             "curve25519": account["curve25519"]}
        # What Ferry holds for nio: its device key (or another, as a forging server would hand
        # out), and a master key nio never MACs (nio has no cross-signing), to be left unverified.
        self.nio_for_ferry = {"user_id": NIO_USER, "device_id": NIO_DEVICE, "ed25519": nio_key_for_ferry or nio.device["ed25519"],
                              "master_key": ed25519_key()}
        self.ferry: dict[str, Any] = {}
        self.nio_answer: dict[str, Any] = {}
        self.sent: list[tuple[str, dict]] = []
        self.ferry_accepted = True
        if ferry_starts:
            start = probe("sas_start", user_id=FERRY_USER, device_id=FERRY_DEVICE, master_key=self.ferry_master,
                          them=self.nio_for_ferry, transaction_id=self.tx)["message"]
            self.exchange([("nio", self._wire("ferry", start))], first_to_nio_is_start=True)
        else:
            start = nio("start", them=self.ferry_device, transaction_id=self.tx)["message"]
            start = self._wire("nio", start)
            self.ferry = probe("sas_accept", user_id=FERRY_USER, device_id=FERRY_DEVICE, master_key=self.ferry_master,
                               them=self.nio_for_ferry, sender=NIO_USER, content=start["content"])
            self.ferry_accepted = "cancel" not in self.ferry
            self.exchange([("nio", self._wire("ferry", self.ferry["message"]))])

    def _wire(self, sender: str, message: dict) -> dict:
        message = self.tamper(sender, json.loads(json.dumps(message)))
        self.sent.append((sender, message))
        return message

    def exchange(self, pending: list[tuple[str, dict]], first_to_nio_is_start: bool = False) -> None:
        while pending:
            to, message = pending.pop(0)
            if to == "nio":
                if message["type"] == "m.key.verification.done":
                    continue  # nio knows no done (its verification ends with the MACs)
                if first_to_nio_is_start:
                    first_to_nio_is_start = False
                    self.nio_answer = self.nio("accept", them=self.ferry_device, sender=FERRY_USER, content=message["content"])
                    replies = [self.nio_answer["message"]]
                else:
                    self.nio_answer = self.nio("receive", transaction_id=self.tx, sender=FERRY_USER, type=message["type"],
                                               content=message["content"])
                    replies = self.nio_answer.get("messages", [])
                pending += [("ferry", self._wire("nio", reply)) for reply in replies]
            else:
                self.ferry = self.probe("sas_receive", transaction_id=self.tx, sender=NIO_USER, event_type=message["type"],
                                        content=message["content"])
                assert "error" not in self.ferry, self.ferry
                pending += [("nio", self._wire("ferry", reply)) for reply in self.ferry["messages"]]

    @property
    def ferry_phase(self) -> str:
        return self.probe("sas_state", transaction_id=self.tx)["phase"] if self.ferry_accepted else "never_accepted"

    def show(self) -> tuple[dict, dict]:
        return self.probe("sas_show", transaction_id=self.tx), self.nio("show", transaction_id=self.tx)

    def confirm(self) -> None:
        """Both people say the SAS matches: Ferry first, its MAC reaching nio before nio's
        person confirms (nio holds it until then), then nio."""
        confirmed = self.probe("sas_confirm", transaction_id=self.tx)
        self.exchange([("nio", self._wire("ferry", message)) for message in confirmed["messages"]])
        if "cancel" in self.nio_answer:
            return
        self.nio_answer = self.nio_confirmed = self.nio("confirm", transaction_id=self.tx)
        self.exchange([("ferry", self._wire("nio", message)) for message in self.nio_answer["messages"]])

    def sent_by(self, sender: str, kind: str) -> dict:
        return next(message for who, message in self.sent if who == sender and message["type"] == f"m.key.verification.{kind}")


def assert_same_sas(run: Run) -> None:
    ferry, nio = run.show()
    assert ferry["phase"] == "comparing", ferry
    assert ferry["decimals"] == nio["decimals"]
    # The emoji numbers as the library computes them (libolm's bytes through nio 0.25's own code;
    # vodozemac's own emoji_indices), and the pictures nio shows where they are right: nio 0.26
    # re-splits vodozemac's indices as if they were bytes, so it shows other emoji than every
    # other client (test_nio_026_as_it_is_departs_from_the_spec). nio's names are older than the
    # spec's for three pictures, so the pictures are compared, not the names.
    assert ferry["emoji_numbers"] == nio["emoji_indices"]
    if run.nio.kind == "nio25":
        assert [emoji for emoji, _ in ferry["emoji"]] == [emoji for emoji, _ in nio["emoji"]]
    assert ferry["methods"] == ["decimal", "emoji"]
    assert all(1000 <= number <= 9191 for number in ferry["decimals"]) and len(ferry["emoji"]) == 7


@pytest.mark.parametrize("ferry_starts", [True, False], ids=["ferry-starts", "nio-starts"])
def test_both_sides_show_the_same_sas_and_verify_each_other(probe, nio, ferry_starts):
    run = Run(probe, nio, ferry_starts)
    accept = run.sent_by("nio" if ferry_starts else "ferry", "accept")
    assert accept["content"]["message_authentication_code"] == nio.mac_method
    assert accept["content"]["key_agreement_protocol"] == "curve25519-hkdf-sha256"
    assert_same_sas(run)
    run.confirm()
    # nio took Ferry's MACs: the device key, and the list that also names Ferry's master key
    # (nio does not check a master key's own MAC, but the list's MAC covers its id).
    ferry_mac = run.sent_by("ferry", "mac")["content"]
    assert set(ferry_mac["mac"]) == {f"ed25519:{FERRY_DEVICE}", f"ed25519:{run.ferry_master}"}
    assert "cancel" not in run.nio_answer, run.nio_answer
    assert run.nio_answer["verified"] and run.nio_answer["verified_devices"] == [FERRY_DEVICE]
    # Ferry took nio's: nio's device verified; the master key Ferry holds for nio was not MACed.
    state = probe("sas_state", transaction_id=run.tx)
    assert state["phase"] == "done", state
    assert state["verified_master_key"] is None
    assert [message["type"] for who, message in run.sent if who == "ferry"][-1] == "m.key.verification.done"


def test_a_start_that_offers_only_the_v2_mac_is_what_nio_speaks_or_refuses(probe, nio):
    """Why Ferry's start still offers the deprecated MAC: nio as it is knows only that one and
    refuses a start without it (m.unknown_method); nio made to speak v2 takes it."""
    account = probe("account", user_id=FERRY_USER, device_id=FERRY_DEVICE, count=1)
    ferry = {"user_id": FERRY_USER, "device_id": FERRY_DEVICE, "ed25519": account["ed25519"]}
    start = probe("sas_start", user_id=FERRY_USER, device_id=FERRY_DEVICE, transaction_id=f"t-{uuid.uuid4().hex}",
                  them={"user_id": NIO_USER, "device_id": NIO_DEVICE, "ed25519": nio.device["ed25519"]})["message"]
    assert start["content"]["message_authentication_codes"] == ["hkdf-hmac-sha256.v2", "hkdf-hmac-sha256"]
    only_v2 = {**start["content"], "message_authentication_codes": ["hkdf-hmac-sha256.v2"]}
    answer = nio("accept", them=ferry, sender=FERRY_USER, content=only_v2)
    if nio.mac_method == "hkdf-hmac-sha256.v2":
        assert answer["message"]["content"]["message_authentication_code"] == "hkdf-hmac-sha256.v2", answer
    else:
        assert answer.get("cancel") == "m.unknown_method", answer


@pytest.mark.parametrize("ferry_starts", [True, False], ids=["ferry-starts", "nio-starts"])
def test_a_changed_commitment_is_refused_by_the_starting_side(probe, nio, ferry_starts):
    other = b64(hashlib.sha256(b"not the key").digest())
    def commit_elsewhere(sender, message):
        if message["type"] == "m.key.verification.accept":
            message["content"]["commitment"] = other
        return message
    run = Run(probe, nio, ferry_starts, tamper=commit_elsewhere)
    if ferry_starts:
        assert run.ferry.get("cancel") == "m.mismatched_commitment", run.ferry
        assert run.ferry_phase == "cancelled_by_us:m.mismatched_commitment"
    else:
        assert run.nio_answer.get("cancel") == "m.mismatched_commitment", run.nio_answer
        assert run.ferry_phase == "cancelled_by_them:m.mismatched_commitment"


@pytest.mark.parametrize("ferry_starts", [True, False], ids=["ferry-starts", "nio-starts"])
def test_a_swapped_accepting_key_is_refused_by_the_starting_side(probe, nio, ferry_starts):
    """A man in the middle replaces the accepting side's key: the commitment catches it."""
    mallory = curve25519_key()
    accepter = "nio" if ferry_starts else "ferry"
    def swap(sender, message):
        if sender == accepter and message["type"] == "m.key.verification.key":
            message["content"]["key"] = mallory
        return message
    run = Run(probe, nio, ferry_starts, tamper=swap)
    if ferry_starts:
        assert run.ferry.get("cancel") == "m.mismatched_commitment", run.ferry
    else:
        assert run.nio_answer.get("cancel") == "m.mismatched_commitment", run.nio_answer


@pytest.mark.parametrize("ferry_starts", [True, False], ids=["ferry-starts", "nio-starts"])
def test_a_swapped_starting_key_shows_another_sas_and_the_macs_fail(probe, nio, ferry_starts):
    """A man in the middle replaces the starting side's key, which no commitment covers: the two
    sides show different SAS, and if the people confirm anyway, each refuses the other's MAC."""
    mallory = curve25519_key()
    starter = "ferry" if ferry_starts else "nio"
    def swap(sender, message):
        if sender == starter and message["type"] == "m.key.verification.key":
            message["content"]["key"] = mallory
        return message
    run = Run(probe, nio, ferry_starts, tamper=swap)
    ferry, theirs = run.show()
    assert ferry["phase"] == "comparing"
    assert (ferry["decimals"], [e for e, _ in ferry["emoji"]]) != (theirs["decimals"], [e for e, _ in theirs["emoji"]])
    # Both people confirm anyway, before either MAC arrives; then each MAC is delivered.
    ferry_mac = probe("sas_confirm", transaction_id=run.tx)["messages"][0]
    nio_mac = nio("confirm", transaction_id=run.tx)["messages"][0]
    at_nio = nio("receive", transaction_id=run.tx, sender=FERRY_USER, type=ferry_mac["type"], content=ferry_mac["content"])
    assert at_nio.get("cancel") == "m.key_mismatch" and not at_nio["verified"], at_nio
    at_ferry = probe("sas_receive", transaction_id=run.tx, sender=NIO_USER, event_type=nio_mac["type"], content=nio_mac["content"])
    assert at_ferry.get("cancel") == "m.key_mismatch", at_ferry
    assert at_ferry["phase"] == "cancelled_by_us:m.key_mismatch"


@pytest.mark.parametrize("field", ["device", "keys"])
@pytest.mark.parametrize("ferry_starts", [True, False], ids=["ferry-starts", "nio-starts"])
def test_a_changed_mac_is_refused_by_each_side(probe, nio, ferry_starts, field):
    for victim in ("ferry", "nio"):  # whose MAC is changed on the way
        def change_mac(sender, message, victim=victim):
            if sender == victim and message["type"] == "m.key.verification.mac":
                content = message["content"]
                if field == "keys":
                    content["keys"] = changed(content["keys"])
                else:
                    device = FERRY_DEVICE if victim == "ferry" else NIO_DEVICE
                    content["mac"][f"ed25519:{device}"] = changed(content["mac"][f"ed25519:{device}"])
            return message
        run = Run(probe, nio, ferry_starts, tamper=change_mac)
        assert_same_sas(run)
        run.confirm()
        if victim == "ferry":
            assert run.nio_answer.get("cancel") == "m.key_mismatch", run.nio_answer
            assert not run.nio_answer["verified"]
        else:
            assert run.ferry.get("cancel") == "m.key_mismatch", run.ferry
            assert run.ferry_phase == "cancelled_by_us:m.key_mismatch"


def test_a_mac_over_another_device_key_is_refused_by_ferry(probe, nio):
    """Ferry holds another Ed25519 key for nio's device than nio's own (a forgery in /keys/query):
    nio's honest MAC does not match it, though everything else does."""
    run = Run(probe, nio, ferry_starts=True, nio_key_for_ferry=ed25519_key())
    assert_same_sas(run)
    run.confirm()
    assert run.nio_confirmed["verified"]  # nio took Ferry's MAC before Ferry refused its own
    assert run.ferry.get("cancel") == "m.key_mismatch", run.ferry


def test_messages_from_a_stranger_or_another_transaction_do_not_end_it(probe, nio):
    run = Run(probe, nio, ferry_starts=True)
    assert_same_sas(run)
    mac = {"transaction_id": run.tx, "mac": {}, "keys": ""}
    stranger = probe("sas_receive", transaction_id=run.tx, sender="@eve:localhost", event_type="m.key.verification.cancel",
                     content={"transaction_id": run.tx, "code": "m.user", "reason": "eve"})
    assert stranger["cancel"] == "m.user_mismatch" and stranger["phase"] == "comparing"
    elsewhere = probe("sas_receive", transaction_id=run.tx, sender=NIO_USER, event_type="m.key.verification.mac",
                      content={**mac, "transaction_id": "another"})
    assert elsewhere["cancel"] == "m.unknown_transaction" and elsewhere["phase"] == "comparing"
    assert elsewhere["messages"][0]["content"]["transaction_id"] == "another"
    run.confirm()
    assert probe("sas_state", transaction_id=run.tx)["phase"] == "done"


@pytest.fixture(scope="module")
def nio26_as_is():
    running = NioSas("nio26", "as-is")
    yield running
    running.close()


def test_nio_026_as_it_is_departs_from_the_spec(probe, nio26_as_is):
    """nio 0.26 (vodozemac) writes its commitment in hex and its `hkdf-hmac-sha256` MAC in
    correct base64. Ferry, following the spec, refuses both; translated on the wire into what the
    spec says (the same hash in base64), the commitment holds and the SAS matches, which shows
    nio hashes and derives the same bytes as Ferry and differs only in the encodings."""
    nio = nio26_as_is
    # As it is: Ferry starts, nio's hex commitment does not hold.
    run = Run(probe, nio, ferry_starts=True)
    commitment = run.sent_by("nio", "accept")["content"]["commitment"]
    assert len(commitment) == 64 and bytes.fromhex(commitment)
    assert run.ferry.get("cancel") == "m.mismatched_commitment", run.ferry
    # nio starts: Ferry's base64 commitment does not hold for nio.
    run = Run(probe, nio, ferry_starts=False)
    assert run.nio_answer.get("cancel") == "m.mismatched_commitment", run.nio_answer

    # The commitment put into base64 on its way to Ferry: Ferry takes nio's key, the SAS agree.
    def to_base64(sender, message):
        if sender == "nio" and message["type"] == "m.key.verification.accept":
            message["content"]["commitment"] = b64(bytes.fromhex(message["content"]["commitment"]))
        return message
    run = Run(probe, nio, ferry_starts=True, tamper=to_base64)
    assert run.sent_by("nio", "accept")["content"]["message_authentication_code"] == "hkdf-hmac-sha256"
    assert_same_sas(run)
    # nio shows other emoji than vodozemac computed (and Ferry shows).
    ferry, theirs = run.show()
    assert [emoji for emoji, _ in theirs["emoji"]] != [emoji for emoji, _ in ferry["emoji"]]
    # Then each refuses the other's `hkdf-hmac-sha256` MAC: nio's is in plain base64, not
    # libolm's encoding. (That it is exactly the v2 MAC shows in the nio26-v2 runs, where nio's MAC
    # function is left as it is and only the method's name changes, and Ferry takes it as v2.)
    ferry_mac = probe("sas_confirm", transaction_id=run.tx)["messages"][0]
    nio_mac = nio("confirm", transaction_id=run.tx)["messages"][0]
    at_nio = nio("receive", transaction_id=run.tx, sender=FERRY_USER, type=ferry_mac["type"], content=ferry_mac["content"])
    assert at_nio.get("cancel") == "m.key_mismatch", at_nio
    at_ferry = probe("sas_receive", transaction_id=run.tx, sender=NIO_USER, event_type=nio_mac["type"], content=nio_mac["content"])
    assert at_ferry.get("cancel") == "m.key_mismatch", at_ferry
