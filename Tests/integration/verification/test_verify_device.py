"""Ferry's device verified by its owner with the account's recovery key.

The account's cross-signing identity and secret storage are set up the way Element sets them up,
by a client we did not write in Swift (secretstorage.py and crosssigning.py: Python's
`cryptography`, canonical JSON of their own). Ferry is given the recovery key or its passphrase
(`ferry verify` on standard input, Share1.VerifyDevice), and that client then checks Ferry's device
signature against the account's self-signing key and master key with its own code — never
Ferry's word.
"""

from __future__ import annotations

import json
import subprocess

import pytest
from gi.repository import GLib

from crosssigning import CrossSigningIdentity, bare_device, is_device_cross_signed
from ferryenv import EX_DATAERR, EX_OK, EX_UNAVAILABLE, wait_for
from hostileproxy import HostileProxy
from matrixflow import error_sentence, get_property, sign_in, sign_in_call, sign_out, status_json
from secretstorage import SecretStorage, bootstrap, broken_parity_recovery_key, wrong_recovery_key

EX_NOUSER_OR_NOPERM = 77


@pytest.fixture
def ferry(new_session, homeserver):
    """(session, user, device id): a Ferry signed in as a user of the test's own."""
    user = homeserver.new_user("verify")
    session = new_session()
    account = sign_in(session, homeserver, user)
    yield session, user, account["device-id"]
    session.stop()


def cross_signed(homeserver, user, device: str, identity: CrossSigningIdentity) -> bool:
    """The other client's own check: device ← self-signing key ← this identity's master key."""
    return is_device_cross_signed(homeserver, user.token, user.user_id, device, master=identity.public(identity.master))


def secret_bytes_everywhere(session, *secrets: str) -> list[str]:
    """Which of `secrets` appear in Ferry's log or database (neither may keep any)."""
    places = {"log": session.log_path.read_bytes() if session.log_path.exists() else b""}
    for path in session.state_dir.glob("ferry.sqlite3*"):
        places[path.name] = path.read_bytes()
    return [f"{secret[:6]}… in {name}" for secret in secrets for name, data in places.items()
            if secret.encode() in data or secret.replace(" ", "").encode() in data]


def verify_call(session, **secret: str):
    entries = {key.replace("_", "-"): GLib.Variant("s", value) for key, value in secret.items()}
    return session.gdbus_call("VerifyDevice", GLib.Variant("a{sv}", entries), timeout=60)


def test_the_recovery_key_on_standard_input_verifies_the_device_and_the_other_client_agrees(ferry, homeserver):
    session, user, device = ferry
    # Given an account whose identity and secret storage another client set up
    identity, storage = bootstrap(homeserver, user)
    assert not cross_signed(homeserver, user, device, identity)
    assert status_json(session)["device_verification"] == "unverified"

    # When the person gives Ferry the recovery key, as a script would (standard input)
    done = session.ferry("verify", input=storage.recovery_key + "\n", timeout=60)

    # Then the other client finds Ferry's device signed by the account's self-signing key
    assert done.returncode == EX_OK, done.stderr
    assert "verified" in done.stderr
    assert cross_signed(homeserver, user, device, identity)
    # And Ferry says so everywhere a person or a client looks
    status = status_json(session)
    assert (status["device_id"], status["device_verification"]) == (device, "verified")
    assert get_property(session, "DeviceVerification") == "verified"
    assert "This device (%s) is verified." % device in session.ferry("status").stdout
    # And nothing of the recovery key or the self-signing key was kept or logged
    seed = storage.read("m.cross_signing.self_signing")
    assert secret_bytes_everywhere(session, storage.recovery_key, seed) == []


@pytest.mark.parametrize("how", ["told apart by shape", "--passphrase"])
def test_the_passphrase_verifies_the_device_as_element_derives_it(ferry, homeserver, how):
    session, user, device = ferry
    # Element's rounds: the key derivation is part of what the person waits for
    identity, storage = bootstrap(homeserver, user, passphrase="correct horse battery staple", iterations=500_000)

    done = session.ferry("verify", "--json", *(["--passphrase"] if how == "--passphrase" else []),
                         input="correct horse battery staple\n", timeout=60)

    assert done.returncode == EX_OK, done.stderr
    assert json.loads(done.stdout) == {"verification": "verified"}
    assert cross_signed(homeserver, user, device, identity)
    assert secret_bytes_everywhere(session, "correct horse battery staple") == []


def test_a_wrong_key_a_typo_and_a_wrong_passphrase_are_clear_errors_and_verify_nothing(ferry, homeserver):
    session, user, device = ferry
    identity, storage = bootstrap(homeserver, user, passphrase="the right one")

    wrong = session.ferry("verify", input=wrong_recovery_key(storage.recovery_key))
    assert wrong.returncode == EX_DATAERR, wrong.stderr
    assert "does not open this account's secret storage" in error_sentence(wrong)

    typo = session.ferry("verify", input=broken_parity_recovery_key(storage.recovery_key))
    assert typo.returncode == EX_DATAERR, typo.stderr
    assert "typo" in error_sentence(typo)

    cut = session.ferry("verify", input=storage.recovery_key[:-10])
    assert cut.returncode == EX_DATAERR, cut.stderr
    assert "all of it was copied" in error_sentence(cut)

    passphrase = session.ferry("verify", "--passphrase", input="the wrong one")
    assert passphrase.returncode == EX_DATAERR, passphrase.stderr
    assert "That passphrase does not open" in error_sentence(passphrase)

    nothing = session.ferry("verify", input="")
    assert nothing.returncode == EX_DATAERR
    assert "no recovery key or passphrase on standard input" in error_sentence(nothing)

    # Nothing was signed, the service is up, and the right key still works afterwards
    assert not cross_signed(homeserver, user, device, identity)
    assert status_json(session)["device_verification"] == "unverified"
    assert session.ferry("verify", input=storage.recovery_key).returncode == EX_OK
    assert cross_signed(homeserver, user, device, identity)


def test_an_account_without_cross_signing_says_so_and_cannot_be_verified(ferry, homeserver):
    session, user, device = ferry
    assert status_json(session)["device_verification"] == "no-identity"
    assert get_property(session, "DeviceVerification") == "no-identity"
    assert "the account has no cross-signing identity" in session.ferry("status").stdout

    # A well-formed recovery key, but nothing for it to open
    done = session.ferry("verify", input=wrong_recovery_key())
    assert done.returncode == EX_UNAVAILABLE, done.stderr
    assert "no cross-signing identity yet" in error_sentence(done)


def test_secret_storage_left_from_an_identity_reset_elsewhere_is_refused(ferry, homeserver):
    session, user, device = ferry
    old, storage = bootstrap(homeserver, user)
    # Another client resets the identity and does not store the new keys
    new = CrossSigningIdentity(user.user_id)
    new.upload(homeserver, user.token, user.password)

    done = session.ferry("verify", input=storage.recovery_key)

    assert done.returncode == EX_UNAVAILABLE, done.stderr
    assert "reset elsewhere" in error_sentence(done)
    assert not cross_signed(homeserver, user, device, new)
    assert not cross_signed(homeserver, user, device, old)


def test_a_device_verified_by_another_client_shows_as_verified(ferry, homeserver):
    session, user, device = ferry
    identity, _ = bootstrap(homeserver, user)
    assert status_json(session)["device_verification"] == "unverified"

    # The person verifies Ferry from their other device (its self-signing key signs Ferry's keys)
    identity.verify_device(homeserver, user.token, device)

    # Asked afresh (at most every two seconds, however often a client polls)
    wait_for(lambda: status_json(session)["device_verification"] == "verified", timeout=10, what="verified")
    assert get_property(session, "DeviceVerification") == "verified"


def test_verify_device_over_d_bus_and_its_argument_errors(ferry, homeserver):
    session, user, device = ferry
    identity, storage = bootstrap(homeserver, user, passphrase="over the bus")

    for bad in ({}, {"recovery_key": storage.recovery_key, "passphrase": "over the bus"}, {"passphrase": " "}):
        reply = verify_call(session, **bad)
        assert reply.error_name == "io.github.ferryshare.Ferry.Error.InvalidArgument", (bad, reply.error_name)
        assert reply.error_message.endswith(".")
    wrong_type = session.gdbus_call("VerifyDevice", GLib.Variant("a{sv}", {"recovery-key": GLib.Variant("u", 5)}))
    assert wrong_type.error_name == "io.github.ferryshare.Ferry.Error.InvalidArgument"

    reply = verify_call(session, key_or_passphrase=storage.recovery_key)
    assert reply.ok, reply.error_message
    assert reply.value == ({"verification": "verified"},)
    assert cross_signed(homeserver, user, device, identity)

    sign_out(session)
    reply = verify_call(session, recovery_key=storage.recovery_key)
    assert reply.error_name == "io.github.ferryshare.Ferry.Error.NotSignedIn"
    assert get_property(session, "DeviceVerification") == ""


def published_keys(homeserver, user) -> dict:
    answer = homeserver.call("POST", "/_matrix/client/v3/keys/query", user.token, json_body={"device_keys": {user.user_id: []}})
    return {kind: answer.get(f"{kind}_keys", {}).get(user.user_id) for kind in ("master", "self_signing", "user_signing")}


def test_set_up_makes_an_identity_that_the_other_client_opens_and_uses(ferry, homeserver):
    session, user, device = ferry
    assert status_json(session)["device_verification"] == "no-identity"

    # When the person sets up cross-signing from Ferry (the password on standard input, which
    # Synapse does not need for an account's first identity: MSC3967)
    done = session.ferry("verify", "--set-up", "--password-stdin", "--json", input=user.password + "\n", timeout=60)
    assert done.returncode == EX_OK, done.stderr
    result = json.loads(done.stdout)
    assert result["verification"] == "verified"

    # Then the other client opens the new secret storage with the recovery key shown, finds the
    # three private keys there, and they are the public keys the server now lists
    storage = SecretStorage.open(homeserver, user.token, user.user_id, recovery_key=result["recovery_key"])
    identity = CrossSigningIdentity.from_secret_storage(storage)
    published = published_keys(homeserver, user)
    for kind, key in (("master", identity.master), ("self_signing", identity.self_signing),
                      ("user_signing", identity.user_signing)):
        assert list(published[kind]["keys"].values()) == [identity.public(key)], kind
    # And by its own check Ferry's device is signed by it
    assert cross_signed(homeserver, user, device, identity)
    # And it accepts the identity as its own: with the keys from storage it signs a device of its own
    token, other_device = bare_device(homeserver, user.user_id, user.password)
    identity.verify_device(homeserver, token, other_device)
    assert cross_signed(homeserver, user, other_device, identity)
    # And the recovery key is nowhere in Ferry's log or database
    assert secret_bytes_everywhere(session, result["recovery_key"], user.password) == []
    assert status_json(session)["device_verification"] == "verified"


def test_set_up_never_replaces_an_identity_or_secret_storage(ferry, homeserver):
    session, user, device = ferry
    identity, storage = bootstrap(homeserver, user)
    before = published_keys(homeserver, user)

    done = session.ferry("verify", "--set-up")

    assert done.returncode == EX_UNAVAILABLE, done.stderr
    assert "has a cross-signing identity already" in error_sentence(done)
    assert published_keys(homeserver, user) == before
    assert SecretStorage.open(homeserver, user.token, user.user_id, recovery_key=storage.recovery_key).key_id == storage.key_id

    # Secret storage without an identity (another client's half-done set-up) is left alone too
    other = homeserver.new_user("storage-only")
    SecretStorage.create(homeserver, other.token, other.user_id)
    second = sign_in(session, homeserver, other)
    reply = session.gdbus_call("SetUpCrossSigning", GLib.Variant("a{sv}", {"password": GLib.Variant("u", 1)}))
    assert reply.error_name == "io.github.ferryshare.Ferry.Error.InvalidArgument"
    done = session.ferry("verify", "--set-up", "--account", other.user_id)
    assert done.returncode == EX_UNAVAILABLE, done.stderr
    assert "has secret storage already" in error_sentence(done)
    assert published_keys(homeserver, other)["master"] is None
    assert second["device-id"]


def test_two_set_ups_at_once_make_one_identity_whose_key_opens_its_storage(ferry, homeserver):
    session, user, device = ferry
    calls = [subprocess.Popen([str(session.prefix / "bin" / "ferry"), "verify", "--set-up", "--json"], env=session.env,
                              stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(2)]
    results = [(call.wait(timeout=60), call.stdout.read(), call.stderr.read()) for call in calls]

    done = [json.loads(out) for code, out, _ in results if code == EX_OK]
    refused = [err for code, _, err in results if code != EX_OK]
    assert len(done) == 1 and len(refused) == 1, results
    assert "under way" in refused[0] or "already" in refused[0], refused
    storage = SecretStorage.open(homeserver, user.token, user.user_id, recovery_key=done[0]["recovery_key"])
    identity = CrossSigningIdentity.from_secret_storage(storage)
    assert list(published_keys(homeserver, user)["master"]["keys"].values()) == [identity.public(identity.master)]
    assert cross_signed(homeserver, user, device, identity)


def test_a_passphrase_shaped_like_a_recovery_key_still_opens_the_storage(ferry, homeserver):
    session, user, device = ferry
    # 48 letters and digits beginning "Es": a recovery key by shape, which does not decode as one
    odd = "Es" + "abcdefghijkmnopqrstuvwxyz123456789ABCDEFGHJKLMN"[:46]
    identity, _ = bootstrap(homeserver, user, passphrase=odd)

    done = session.ferry("verify", input=odd)

    assert done.returncode == EX_OK, done.stderr
    assert cross_signed(homeserver, user, device, identity)


UIA_PASSWORD = {"session": "uia-session", "flows": [{"stages": ["m.login.password"]}], "params": {},
                "errcode": "M_UNAUTHORIZED", "error": "Password needed"}


@pytest.fixture
def behind_a_proxy(new_session, homeserver):
    """(session, user, device id, proxy): Ferry signed in through a proxy that can answer for Synapse
    (which takes an account's first identity without asking: MSC3967)."""
    proxy = HostileProxy(homeserver).start()
    user = homeserver.new_user("uia")
    session = new_session()
    account = sign_in_call(session, homeserver=proxy.base_url, user=user.user_id, password=user.password).expect_ok()
    yield session, user, account["device-id"], proxy
    session.stop()
    proxy.stop()


def test_a_server_that_asks_for_the_password_gets_it_only_when_given(behind_a_proxy, homeserver):
    session, user, device, proxy = behind_a_proxy
    # The server answers the first upload with user-interactive auth offering a password
    proxy.answer("POST", r"/keys/device_signing/upload", status=401, body=UIA_PASSWORD, times=1)

    asked = session.ferry("verify", "--set-up")
    assert asked.returncode == EX_NOUSER_OR_NOPERM, asked.stderr
    assert "asks for your password" in error_sentence(asked)
    assert published_keys(homeserver, user)["master"] is None

    # With the password, the same set-up goes on (the proxy answers 401 once more, then lets the
    # authenticated upload through to Synapse)
    proxy.answer("POST", r"/keys/device_signing/upload", status=401, body=UIA_PASSWORD, times=1)
    done = session.ferry("verify", "--set-up", "--password-stdin", "--json", input=user.password, timeout=60)
    assert done.returncode == EX_OK, done.stderr
    storage = SecretStorage.open(homeserver, user.token, user.user_id, recovery_key=json.loads(done.stdout)["recovery_key"])
    assert cross_signed(homeserver, user, device, CrossSigningIdentity.from_secret_storage(storage))


def test_a_refused_password_and_an_auth_other_than_a_password_are_said(behind_a_proxy, homeserver):
    session, user, device, proxy = behind_a_proxy
    proxy.answer("POST", r"/keys/device_signing/upload", status=401, body=UIA_PASSWORD, times=2)
    wrong = session.ferry("verify", "--set-up", "--password-stdin", input="not the password")
    assert wrong.returncode == EX_NOUSER_OR_NOPERM, wrong.stderr
    assert "refused the password" in error_sentence(wrong)

    sso_only = {**UIA_PASSWORD, "flows": [{"stages": ["m.login.sso"]}]}
    proxy.answer("POST", r"/keys/device_signing/upload", status=401, body=sso_only, times=1)
    other = session.ferry("verify", "--set-up", "--password-stdin", input=user.password)
    assert other.returncode == EX_UNAVAILABLE, other.stderr
    assert "another confirmation than a password" in error_sentence(other)
    assert published_keys(homeserver, user)["master"] is None


def a_server_listing_its_own_master_key(homeserver, user, device: str, identity: CrossSigningIdentity) -> dict:
    """The /keys/query answer of a server that lies: the account's real self-signing key and
    devices (Ferry's among them), but a master key of the server's own making that signs that
    self-signing key."""
    def query() -> dict:
        return homeserver.call("POST", "/_matrix/client/v3/keys/query", user.token,
                               json_body={"device_keys": {user.user_id: []}})
    wait_for(lambda: device in query()["device_keys"].get(user.user_id, {}), timeout=30, what="Ferry's device keys")
    answer = query()
    forger = CrossSigningIdentity(user.user_id, self_signing=identity.self_signing)
    answer["master_keys"] = {user.user_id: forger.key_object(forger.master, "master")}
    answer["self_signing_keys"] = {
        user.user_id: forger.sign(forger.key_object(identity.self_signing, "self_signing"), forger.master)}
    return answer


def test_a_server_listing_another_master_key_than_secret_storage_holds_gets_no_verification(
        behind_a_proxy, homeserver):
    session, user, device, proxy = behind_a_proxy
    # Given an account whose identity and secret storage another client set up (master key in it)
    identity, storage = bootstrap(homeserver, user)
    # And a server that lists a master key of its own, which signs the account's self-signing key
    proxy.answer("POST", r"/keys/query", body=a_server_listing_its_own_master_key(homeserver, user, device, identity),
                 times=20)

    # When the person verifies with the recovery key
    done = session.ferry("verify", input=storage.recovery_key + "\n", timeout=60)

    # Then Ferry refuses, saying why, and signs nothing
    assert done.returncode != EX_OK
    assert "a key of its own" in error_sentence(done), done.stderr
    assert not cross_signed(homeserver, user, device, identity)


def test_once_verified_a_master_key_the_server_swaps_in_later_makes_the_device_unverified(
        behind_a_proxy, homeserver):
    session, user, device, proxy = behind_a_proxy
    # Given Ferry's device verified with the recovery key, the server honest then
    identity, storage = bootstrap(homeserver, user)
    done = session.ferry("verify", input=storage.recovery_key + "\n", timeout=60)
    assert done.returncode == EX_OK, done.stderr
    assert status_json(session)["device_verification"] == "verified"

    # When the server starts listing a master key of its own (which signs the real self-signing key,
    # which signed Ferry's device: a chain that checks out, under the wrong master key)
    proxy.answer("POST", r"/keys/query", body=a_server_listing_its_own_master_key(homeserver, user, device, identity),
                 times=20)

    # Then Ferry no longer says its device is verified (once the status asks again: every 2 s at most)
    wait_for(lambda: status_json(session)["device_verification"] == "unverified", timeout=15,
             what="the status to ask the server again")
    assert "master key" in session.log_path.read_text(errors="replace")


@pytest.mark.parametrize("how", ["recovery key", "passphrase"])
def test_the_storage_key_is_gone_from_the_services_memory_after_verifying(ferry, homeserver, how):
    from processmemory import places_holding
    from secretstorage import decode_recovery_key, passphrase_key
    session, user, device = ferry
    # Given secret storage whose key Ferry is given as the recovery key or as its passphrase
    passphrase = "correct horse battery staple" if how == "passphrase" else None
    identity, storage = bootstrap(homeserver, user, passphrase=passphrase)
    given = passphrase if passphrase else storage.recovery_key
    done = session.ferry("verify", *(["--passphrase"] if passphrase else []), input=given + "\n", timeout=60)
    assert done.returncode == EX_OK, done.stderr

    # Then the 32 bytes of the storage key, which opened the self-signing key, are nowhere in the
    # running service's memory: used, then zeroed (the typed text itself is GLib's and Swift's
    # strings, which nothing can zero, and is not looked for)
    key = decode_recovery_key(storage.recovery_key)
    pid = session.name_owner_pid()
    assert pid
    # (Halves too: a freed block's first 16 bytes are overwritten by malloc's own pointers.)
    assert places_holding(pid, {"the storage key": key, "its first half": key[:16], "its second half": key[16:]}) == []
    assert places_holding(pid, {"the user id": user.user_id.encode()}), "the memory was read"
