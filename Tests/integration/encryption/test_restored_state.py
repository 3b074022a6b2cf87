"""A copy of Ferry's state restored from a backup must not make it use a Megolm message index a
second time (the same key for another plaintext). The database is copied after the first text,
a second text goes out, the copy is put back, a third text goes out: every message Ferry sent has
its own (session, index), read from the ciphertexts as the room holds them, and a client we did
not write (matrix-nio over vodozemac) decrypts all three."""

from __future__ import annotations

import base64
import shutil
import signal

from ferryenv import EX_OK
from matrixflow import sign_in
from nioreaders import READERS


def megolm_index(ciphertext: str) -> int:
    """The message index of a Megolm message: version 3, then field 1 (tag 0x08) as a varint."""
    data = base64.b64decode(ciphertext + "=" * (-len(ciphertext) % 4))
    assert data[0] == 3 and data[1] == 0x08, data[:2]
    index, shift, at = 0, 0, 2
    while True:
        byte = data[at]
        index |= (byte & 0x7F) << shift
        at, shift = at + 1, shift + 7
        if byte < 0x80:
            return index


def database_files(session) -> list:
    return [session.database.with_name(session.database.name + suffix) for suffix in ("", "-wal", "-shm")]


def test_a_restored_copy_of_the_state_never_sends_under_an_index_used_before(new_session, homeserver, matrix_user,
                                                                             nio_reader, tmp_path):
    session = new_session()
    me = homeserver.new_user("restored")
    sign_in(session, homeserver, me)
    friend = matrix_user("restored-reader")
    reader = nio_reader(READERS[-1], friend)
    room = homeserver.create_room(me.token, name="Restored", encrypted=True, invite=[friend.user_id])
    homeserver.join(friend.token, room)

    def text(body: str) -> None:
        done = session.ferry("text", body, "--to", room)
        assert done.returncode == EX_OK, done.stderr

    # Given the state copied (with the service stopped, as a backup tool would) after one text
    text("one")
    session.kill_service(signal.SIGTERM)
    backup = tmp_path / "backup"
    backup.mkdir()
    for path in database_files(session):
        if path.exists():
            shutil.copy2(path, backup / path.name)
    # And a second text sent after the copy was made
    text("two")
    session.kill_service(signal.SIGTERM)

    # When the copy is restored and a third text is shared
    for path in database_files(session):
        path.unlink(missing_ok=True)
        if (backup / path.name).exists():
            shutil.copy2(backup / path.name, path)
    text("three")

    # Then no two of Ferry's messages share a session and an index
    events = [e for e in homeserver.events(friend.token, room, "m.room.encrypted") if e["sender"] == me.user_id]
    used = [(e["content"]["session_id"], megolm_index(e["content"]["ciphertext"])) for e in events]
    assert len(used) == 3 and len(set(used)) == 3, used
    # And the third went out under a new session, which the reader was given
    assert used[2][0] != used[1][0]
    decrypted = [e for e in reader.encrypted_messages(room) if e["sender"] == me.user_id]
    assert [e["content"]["body"] if e["decrypted"] else e.get("error") for e in decrypted] == ["one", "two", "three"]
