"""The chaos run: 200 shares while the homeserver answers at random with 429 (normal and huge
retry_after), 500, dropped connections (before the server saw the request, and after it did) and
stalls, and the service is killed with SIGKILL 20 times at random moments. Every share is delivered
exactly once — read back from the server — and the service never crashed by itself.

A person presses Retry on a share that waits more than a few seconds (a huge retry_after is clamped
to an hour; nobody waits that long in a test). Seeded, so a failure can be replayed: FERRY_CHAOS_SEED."""

from __future__ import annotations

import collections
import os
import random
import signal
import time

from ferryenv import EX_OK
from hostileproxy import HostileProxy
from matrixflow import deliveries, new_share_id, retry, sign_in_call

SHARES = 200
KILLS = 20
FAULTS = [("429", 0.08), ("429-huge", 0.02), ("500", 0.05), ("drop-before", 0.03), ("drop-after", 0.04),
          ("stall", 0.02)]


def test_200_shares_through_faults_and_20_kills_are_each_delivered_exactly_once(new_session, homeserver, matrix_user):
    seed = int(os.environ.get("FERRY_CHAOS_SEED", "20261124"))
    rng = random.Random(seed)
    proxy = HostileProxy(homeserver).start()
    me = matrix_user("chaos")
    session = new_session()
    sign_in_call(session, homeserver=proxy.base_url, user=me.user_id, password=me.password).expect_ok()
    rooms = [homeserver.create_room(me.token, name=f"Chaos {n}") for n in range(2)]

    def chaos(method: str, path: str) -> str | None:
        roll = rng.random()
        for fault, rate in FAULTS:
            if roll < rate:
                return fault
            roll -= rate
        return None

    proxy.chaos = chaos
    kills_after = set(rng.sample(range(SHARES), KILLS))
    share_ids, killed = [], 0
    for i in range(SHARES):
        done = session.ferry("text", f"chaos {i}", "--to", rooms[i % 2], "--no-wait", timeout=60)
        assert done.returncode == EX_OK, (i, done.stderr, session.log_tail())
        share_ids.append(new_share_id(done))
        if i in kills_after:
            time.sleep(rng.uniform(0, 0.3))
            session.kill_service(signal.SIGKILL)
            killed += 1

    # Wait until every share is sent; press Retry on one that waits long (a clamped huge retry_after).
    deadline = time.monotonic() + 600
    pending = set(share_ids)
    while pending and time.monotonic() < deadline:
        for share in session.list_shares():
            if share["id"] not in pending:
                continue
            assert share["state"] not in ("failed", "cancelled"), share
            if share["state"] == "sent":
                pending.discard(share["id"])
            elif any(d.get("retry-at", 0) > (time.time() + 5) * 1_000_000 for d in deliveries(share)):
                retry(session, share["id"])
        time.sleep(0.5)
    proxy.chaos = None
    assert not pending, f"{len(pending)} shares not sent after 10 minutes; faults {proxy.faults}; {session.log_tail()}"

    # Every text is in its room exactly once
    counts = collections.Counter()
    for room in rooms:
        counts.update(e["content"]["body"] for e in homeserver.messages(me.token, room) if e["type"] == "m.room.message")
    assert sorted(counts) == sorted(f"chaos {i}" for i in range(SHARES)), "a share is missing"
    assert [body for body, n in counts.items() if n != 1] == [], "a share arrived twice"
    # The faults did happen, and the service never crashed by itself (no crash note, no trap in its log)
    assert killed == KILLS and proxy.faults.get("drop-after", 0) > 0 and proxy.faults.get("429-huge", 0) > 0, proxy.faults
    notes = session.state_dir / "crashes"
    assert not notes.exists() or notes.read_text() == "", notes.read_text()
    # Every start of the service ended in one of our kills or a clean stop, but for the one running:
    # a trap (which prints nothing of its own) would show as a start too many.
    log = session.log_path.read_text(errors="replace")
    starts, stops = log.count("service starting"), log.count("service stopped")
    assert starts - stops - killed == 1 and session.service_running(), \
        f"{starts} starts, {stops} clean stops, {killed} kills: the service died by itself"
    assert "Fatal error" not in log and "Program crashed" not in log
    print(f"chaos seed {seed}: faults {dict(sorted(proxy.faults.items()))}, {killed} kills")
    session.stop()
    proxy.stop()
