"""matrix-nio's own SAS verification (nio.crypto.sas.Sas) behind a pipe, without a homeserver.

Run by the python of .venv-nio25 (nio 0.25, SAS by libolm through python-olm) or .venv-nio26
(nio 0.26, by vodozemac), never by the test runner's:

    python niosas.py --user @nio:localhost --device NIODEVICE [--mode as-is|v2|libolm-compat]

It holds one nio device identity (nio's OlmAccount: its Ed25519 key is what its MACs cover) and
nio Sas objects by transaction id, and answers one JSON line with one JSON line. Events are handed
to nio as a sync would (ToDeviceEvent.parse_event, then the Sas method nio's OlmMachine calls),
and what nio would send next is answered, as nio's OlmMachine.handle_key_verification does:

    {"op": "device"}                            → {"user_id", "device_id", "ed25519", "curve25519", "nio", "mode"}
    {"op": "start", "them": DEVICE, "transaction_id": ID}
                                                → {"message": {"type", "content"}}
    {"op": "accept", "them": DEVICE, "sender": USER, "content": START}
                                                → {"message": accept or cancel, "state"}
    {"op": "receive", "transaction_id": ID, "sender": USER, "type": TYPE, "content": C}
                                                → {"messages": [...], "state", "cancel"?, "verified", "verified_devices"}
    {"op": "show", "transaction_id": ID}        → {"emoji": [[emoji, name], ...] as nio shows them,
                                                   "emoji_indices": the library's numbers, "decimals": [...]}
    {"op": "confirm", "transaction_id": ID}     → {"messages": [mac], "state", "verified"}
    {"op": "close"}

DEVICE is {"user_id", "device_id", "ed25519", "curve25519"?}: the other side as nio's device store
would hold it. A failed request is answered {"error": ...}.

Modes. nio 0.25 as it is speaks `hkdf-hmac-sha256` (libolm's own MAC encoding), which is what the
tests hold Ferry to. nio 0.26 departs from the spec in two places: its commitment is SHA-256 in
hex, not unpadded base64, and its `hkdf-hmac-sha256` MAC is in correct base64 (vodozemac's
`calculate_mac`), i.e. what the spec calls `hkdf-hmac-sha256.v2`; as it is, it cannot verify with
any client that follows the spec (libolm's nio 0.25 included), and the tests say so. (It also
shows wrong emoji, reading vodozemac's emoji numbers as bytes; "show" answers vodozemac's own
numbers beside nio's pictures.) The other
modes change only those names and encodings, each to another function of the same library:

    libolm-compat  (nio 0.26) commitment in base64; `hkdf-hmac-sha256` through vodozemac's
                   calculate_mac_invalid_base64 (its libolm-compatible encoding)
    v2             offer and accept `hkdf-hmac-sha256.v2` instead of `hkdf-hmac-sha256`, its MAC
                   through libolm's calculate_mac_fixed_base64 (nio 0.25) or vodozemac's
                   calculate_mac (nio 0.26); nio 0.26's commitment in base64

so that Ferry's two MAC methods are each checked against both libolm and vodozemac.
"""

from __future__ import annotations

import argparse
import base64
import importlib.metadata
import json
import sys
import traceback

from nio.crypto import OlmAccount
from nio.crypto.device import OlmDevice
from nio.crypto.sas import Sas
from nio.events import ToDeviceEvent
from nio.events.to_device import (KeyVerificationAccept, KeyVerificationCancel, KeyVerificationKey,
                                  KeyVerificationMac)

NIO_VERSION = importlib.metadata.version("matrix-nio")
VODOZEMAC = not hasattr(Sas, "generate_bytes")  # nio 0.26's Sas no longer subclasses olm.Sas


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode().rstrip("=")


def unb64(text: str) -> bytes:
    return base64.b64decode(text + "=" * (-len(text) % 4))


def base64_commitment() -> None:
    """nio 0.26 writes and reads its commitment as hex; this makes it base64, nio's own hash kept."""
    made = Sas.from_key_verification_start.__func__

    def from_key_verification_start(cls, *args, **kwargs):
        sas = made(cls, *args, **kwargs)
        if sas.commitment:
            sas.commitment = b64(bytes.fromhex(sas.commitment))
        return sas

    Sas.from_key_verification_start = classmethod(from_key_verification_start)
    checked = Sas._check_commitment

    def _check_commitment(self, key):
        given = self.commitment
        try:
            self.commitment = unb64(given).hex()
        except ValueError:
            return False
        try:
            return checked(self, key)
        finally:
            self.commitment = given

    Sas._check_commitment = _check_commitment


class LibolmEncodedMacs:
    """nio 0.26's established SAS with vodozemac's libolm-compatible MAC encoding."""

    def __init__(self, established) -> None:
        self.established = established

    def bytes(self, info):
        return self.established.bytes(info)

    def calculate_mac(self, message, info):
        return self.established.calculate_mac_invalid_base64(message, info)


def patch(mode: str) -> None:
    if mode == "as-is":
        return
    if mode == "libolm-compat":
        if not VODOZEMAC:
            raise SystemExit("libolm-compat is nio 0.26's mode: nio 0.25 speaks libolm's encoding as it is")
        base64_commitment()
        establish = Sas.establish_sas

        def establish_sas(self, key):
            establish(self, key)
            self.established_sas = LibolmEncodedMacs(self.established_sas)

        Sas.establish_sas = establish_sas
    elif mode == "v2":
        Sas._mac_normal = "hkdf-hmac-sha256.v2"
        if VODOZEMAC:
            base64_commitment()
            Sas._mac_v1 = [Sas._mac_normal]
        else:
            import olm
            Sas._mac_v1 = [Sas._mac_normal, Sas._mac_old]
            Sas.calculate_mac = olm.Sas.calculate_mac_fixed_base64
    else:
        raise SystemExit(f"unknown mode {mode}")


class Peer:
    def __init__(self, user: str, device: str, mode: str) -> None:
        self.user = user
        self.device = device
        self.mode = mode
        self.account = OlmAccount()
        self.verifications: dict[str, Sas] = {}

    @property
    def ed25519(self) -> str:
        return self.account.identity_keys["ed25519"]

    @staticmethod
    def olm_device(them: dict) -> OlmDevice:
        keys = {"ed25519": them["ed25519"], "curve25519": them.get("curve25519", them["ed25519"])}
        return OlmDevice(them["user_id"], them["device_id"], keys)

    @staticmethod
    def message(message) -> dict:
        return {"type": message.type, "content": message.content}

    def report(self, sas: Sas, messages: list) -> dict:
        answer = {"messages": [self.message(m) for m in messages], "state": sas.state.name,
                  "verified": sas.verified, "verified_devices": list(sas.verified_devices)}
        if sas.canceled:
            answer["cancel"] = sas.cancel_code
        return answer

    def answer(self, request: dict) -> dict:
        op = request["op"]
        if op == "device":
            return {"user_id": self.user, "device_id": self.device, "ed25519": self.ed25519,
                    "curve25519": self.account.identity_keys["curve25519"], "nio": NIO_VERSION, "mode": self.mode}
        if op == "start":
            sas = Sas(self.user, self.device, self.ed25519, self.olm_device(request["them"]), request.get("transaction_id"))
            self.verifications[sas.transaction_id] = sas
            return {"message": self.message(sas.start_verification())}
        if op == "accept":
            event = ToDeviceEvent.parse_event({"sender": request["sender"], "type": "m.key.verification.start",
                                               "content": request["content"]})
            if not hasattr(event, "transaction_id"):
                return {"dropped": type(event).__name__}
            sas = Sas.from_key_verification_start(self.user, self.device, self.ed25519, self.olm_device(request["them"]), event)
            self.verifications[sas.transaction_id] = sas
            message = sas.get_cancellation() if sas.canceled else sas.accept_verification()
            return {"message": self.message(message), "state": sas.state.name, **({"cancel": sas.cancel_code} if sas.canceled else {})}
        sas = self.verifications[request["transaction_id"]]
        if op == "receive":
            event = ToDeviceEvent.parse_event({"sender": request["sender"], "type": request["type"], "content": request["content"]})
            messages = []
            # What nio's OlmMachine.handle_key_verification does with each, message for message.
            if isinstance(event, KeyVerificationAccept):
                sas.receive_accept_event(event)
                messages.append(sas.get_cancellation() if sas.canceled else sas.share_key())
            elif isinstance(event, KeyVerificationKey):
                sas.receive_key_event(event)
                if sas.canceled:
                    messages.append(sas.get_cancellation())
                elif not sas.we_started_it:
                    messages.append(sas.share_key())
            elif isinstance(event, KeyVerificationMac):
                sas.receive_mac_event(event)
                if sas.canceled:
                    messages.append(sas.get_cancellation())
            elif isinstance(event, KeyVerificationCancel):
                sas.cancel()
            else:
                return {"dropped": type(event).__name__, "state": sas.state.name}
            return self.report(sas, messages)
        if op == "show":
            emoji = sas.get_emoji()
            if VODOZEMAC:  # vodozemac's own numbers, which nio 0.26 then misreads (see the tests)
                indices = list(sas.established_sas.bytes(sas._extra_info).emoji_indices)
            else:  # libolm's bytes through nio 0.25's own code
                indices = [Sas.emoji.index(item) for item in emoji]
            return {"emoji": [list(item) for item in emoji], "emoji_indices": indices, "decimals": list(sas.get_decimals())}
        if op == "confirm":
            sas.accept_sas()
            return self.report(sas, [sas.get_mac()])
        raise ValueError(f"unknown op {op}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--user", required=True)
    parser.add_argument("--device", required=True)
    parser.add_argument("--mode", default="as-is")
    args = parser.parse_args()
    patch(args.mode)
    peer = Peer(args.user, args.device, args.mode)
    answers = sys.stdout
    sys.stdout = sys.stderr  # anything printed by accident stays out of the answers
    for line in sys.stdin:
        request = json.loads(line)
        if request.get("op") == "close":
            answers.write("{}\n")
            answers.flush()
            break
        try:
            answer = peer.answer(request)
        except Exception as error:  # the test sees nio's own words
            traceback.print_exc()
            answer = {"error": f"{type(error).__name__}: {error}"}
        answers.write(json.dumps(answer) + "\n")
        answers.flush()


if __name__ == "__main__":
    main()
