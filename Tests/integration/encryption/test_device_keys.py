"""Ferry's device keys on a real Synapse, read back by implementations we did not write.

FerryCrypto's account uploads its signed device keys, one-time keys and fallback key through
FerryMatrix (`DeviceKeysAPI`, driven by ferry-crypto-probe); another user's client queries and
claims them over plain HTTP, checks every signature with libolm's or vodozemac's Ed25519 over
canonical JSON of its own, and starts an Olm session with the claimed key that Ferry then reads.
"""

from __future__ import annotations

from cryptopeers import canonical, strip
from matrixflow import sign_in


def test_uploaded_keys_are_what_others_find_and_verify(homeserver, matrix_user, probe, peer):
    ferry = matrix_user("ferry")
    device = homeserver.whoami(ferry.token)["device_id"]
    uploaded = probe("upload_keys", homeserver=homeserver.base_url, token=ferry.token, user_id=ferry.user_id,
                     device_id=device, count=5)
    assert uploaded["one_time_key_counts"] == {"signed_curve25519": 5}, uploaded

    reader = matrix_user("reader")
    found = homeserver.call("POST", "/_matrix/client/v3/keys/query", reader.token,
                            {"device_keys": {ferry.user_id: []}})["device_keys"][ferry.user_id][device]
    assert found["keys"] == {f"curve25519:{device}": uploaded["curve25519"], f"ed25519:{device}": uploaded["ed25519"]}
    peer.verify(uploaded["ed25519"], canonical(strip(found)), found["signatures"][ferry.user_id][f"ed25519:{device}"])

    claimed = []
    for _ in range(6):
        answer = homeserver.call("POST", "/_matrix/client/v3/keys/claim", reader.token,
                                 {"one_time_keys": {ferry.user_id: {device: "signed_curve25519"}}})
        (key_id, signed), = answer["one_time_keys"][ferry.user_id][device].items()
        peer.verify(uploaded["ed25519"], canonical(strip(signed)), signed["signatures"][ferry.user_id][f"ed25519:{device}"])
        claimed.append(signed)
    # Five one-time keys, each given once; then the fallback key, marked as one.
    assert len({signed["key"] for signed in claimed[:5]}) == 5
    assert all("fallback" not in signed for signed in claimed[:5])
    assert claimed[5].get("fallback") is True

    # A session started from a claimed key reaches Ferry, and Ferry answers on it.
    for signed in (claimed[0], claimed[5]):
        sender = type(peer)()
        sender.outbound(uploaded["curve25519"], signed["key"])
        kind, body = sender.encrypt(b"m.room_key would travel like this")
        assert kind == 0
        assert probe("olm_inbound", identity_key=sender.curve25519, body=body)["plaintext"] == "m.room_key would travel like this"
        answer = probe("olm_encrypt", plaintext="and back")
        assert sender.decrypt(answer["type"], answer["body"]) == b"and back"


def test_refused_upload_is_an_error_not_a_silent_success(homeserver, matrix_user, probe):
    ferry = matrix_user("ferry")
    device = homeserver.whoami(ferry.token)["device_id"]
    # Keys signed for another device id than the token's: Synapse refuses them, and so must Ferry's answer say.
    answer = probe("upload_keys", homeserver=homeserver.base_url, token=ferry.token, user_id=ferry.user_id,
                   device_id=device + "X", count=1)
    assert "M_BAD_JSON" in answer.get("error", ""), answer
    assert "device_id" in answer["error"]


def test_a_fallback_key_someone_claimed_is_replaced_by_a_new_one_others_can_verify(
        new_session, homeserver, matrix_user, peer):
    # Given Ferry's service, signed in, that has sent into an encrypted room (its keys are up)
    me, reader = matrix_user("fallback"), matrix_user("reader")
    room = homeserver.create_room(me.token, name="Fallback", encrypted=True, invite=[reader.user_id])
    homeserver.join(reader.token, room)
    session = new_session()
    device = sign_in(session, homeserver, me)["device-id"]
    assert session.ferry("text", "one", "--to", room).returncode == 0
    found = homeserver.call("POST", "/_matrix/client/v3/keys/query", reader.token,
                            {"device_keys": {me.user_id: []}})["device_keys"][me.user_id][device]
    ed25519 = found["keys"][f"ed25519:{device}"]

    def claim():
        answer = homeserver.call("POST", "/_matrix/client/v3/keys/claim", reader.token,
                                 {"one_time_keys": {me.user_id: {device: "signed_curve25519"}}})
        (key_id, signed), = answer["one_time_keys"][me.user_id][device].items()
        return key_id, signed

    # And others claimed every one-time key of it, and then its fallback key
    first = next(claimed for claimed in (claim() for _ in range(200)) if claimed[1].get("fallback"))

    # When Ferry sends again (its sync says the server holds no unused fallback key)
    assert session.ferry("text", "two", "--to", room).returncode == 0

    # Then the fallback key handed out next is a new one, under a new id, signed by Ferry's device
    key_id, signed = claim()
    assert signed.get("fallback") is True and key_id != first[0] and signed["key"] != first[1]["key"], signed
    peer.verify(ed25519, canonical(strip(signed)), signed["signatures"][me.user_id][f"ed25519:{device}"])
    assert "replaced the fallback key" in session.log_tail(400)
