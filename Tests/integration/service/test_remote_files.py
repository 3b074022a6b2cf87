"""Non-local files for real: an sftp:// location served by an OpenSSH server on loopback, mounted
through GVfs as a file manager mounts it (gio mount), shared with gio open and delivered; and the
same server stopped in the middle of a read, which fails that share within its deadline.

The server is the system's sshd with a configuration of its own (a free port, a host key and an
authorized key made for the test, the internal sftp server); the key is handed to GVfs's ssh
through an ssh-agent named in the session's environment, so nothing of the machine's own ssh
setup is read or changed."""

from __future__ import annotations

import getpass
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import pytest

from ferryenv import APP_ID, file_uri, wait_for
from homeserver import free_port
from matrixflow import complete_share, error_name, png_of_size, sign_in, wait_for_state

SSHD = "/usr/sbin/sshd"
STALL_SECONDS = 5

pytestmark = pytest.mark.skipif(not Path(SSHD).exists() or not shutil.which("ssh-agent"),
                                reason="needs openssh-server and openssh-client (make deps)")


class SftpServer:
    """sshd on 127.0.0.1 serving this machine's files over sftp to the current user, by key."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.port = free_port()
        self.user = getpass.getuser()
        self.agent_socket = root / "agent.sock"
        self.processes: list[subprocess.Popen] = []

    def start(self) -> "SftpServer":
        for key in ("host", "user"):
            subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(self.root / key)], check=True)
        shutil.copy(self.root / "user.pub", self.root / "authorized_keys")
        config = self.root / "sshd_config"
        config.write_text("\n".join([
            f"Port {self.port}", "ListenAddress 127.0.0.1", f"HostKey {self.root / 'host'}",
            f"AuthorizedKeysFile {self.root / 'authorized_keys'}", "StrictModes no",
            "PasswordAuthentication no", "KbdInteractiveAuthentication no", "UsePAM no",
            f"PidFile {self.root / 'sshd.pid'}", "Subsystem sftp internal-sftp", ""]))
        if os.geteuid() == 0:
            Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)  # sshd's privilege separation directory
        self.sshd = subprocess.Popen([SSHD, "-D", "-e", "-f", str(config)], stdout=subprocess.DEVNULL,
                                     stderr=open(self.root / "sshd.log", "wb"))
        self.processes.append(self.sshd)
        wait_for(self._listening, timeout=10, what="sshd to listen")
        agent = subprocess.Popen(["ssh-agent", "-D", "-a", str(self.agent_socket)], stdout=subprocess.DEVNULL)
        self.processes.append(agent)
        wait_for(self.agent_socket.exists, timeout=10, what="ssh-agent's socket")
        subprocess.run(["ssh-add", "-q", str(self.root / "user")], env={**os.environ, "SSH_AUTH_SOCK": str(self.agent_socket)},
                       check=True, capture_output=True)
        return self

    def _listening(self) -> bool:
        try:
            socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
            return True
        except OSError:
            return False

    def uri(self, path: Path) -> str:
        return f"sftp://{self.user}@127.0.0.1:{self.port}{path}"

    def server_processes(self) -> list[int]:
        """sshd and every process it started (one per connection, and their children)."""
        found, frontier = [], [self.sshd.pid]
        while frontier:
            pid = frontier.pop()
            found.append(pid)
            children = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout.split()
            frontier += [int(c) for c in children]
        return found

    def signal(self, sig: int) -> None:
        for pid in self.server_processes():
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass

    def stop(self) -> None:
        self.signal(signal.SIGCONT)
        for process in self.processes:
            process.terminate()
        for process in self.processes:
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()


@pytest.fixture
def sftp(tmp_path):
    root = tmp_path / "sftp"
    root.mkdir()
    server = SftpServer(root).start()
    yield server
    server.stop()


@pytest.fixture
def mounted(new_session, sftp):
    """A session whose GVfs has the sftp location mounted, as after a file manager mounted it."""
    # A short runtime directory: GVfs's ssh keeps its control socket there under a 40-character
    # name, and a Unix socket's path may not pass 107 bytes (a test's own directory is too deep).
    runtime = Path(tempfile.mkdtemp(prefix="ferry-", dir="/tmp"))
    session = new_session(SSH_AUTH_SOCK=str(sftp.agent_socket), FERRY_REMOTE_STALL_SECONDS=str(STALL_SECONDS),
                          XDG_RUNTIME_DIR=str(runtime))
    done = session.run("gio", "mount", sftp.uri(Path("/")), input="", timeout=60)
    assert done.returncode == 0, f"gio mount failed: {done.stderr}"
    yield session
    session.stop()
    shutil.rmtree(runtime, ignore_errors=True)


def test_a_photo_on_an_sftp_server_shared_with_gio_open_arrives_in_the_room_with_its_name_and_type(
        mounted, sftp, homeserver, tmp_path):
    # Given Ferry signed in and chosen for PNG, and a photo that lives on the sftp server
    session = mounted
    user = homeserver.new_user("remote")
    room = homeserver.create_room(user.token, name="Remote files")
    sign_in(session, homeserver, user)
    assert session.run("xdg-mime", "default", f"{APP_ID}.desktop", "image/png").returncode == 0
    served = tmp_path / "served"
    served.mkdir()
    photo = served / "holiday.png"
    photo.write_bytes(png_of_size(64, 48, seed=3))
    uri = sftp.uri(photo)

    # When the remote photo is opened with gio open, and the person chooses the room
    done = session.run("gio", "open", uri, timeout=60)
    assert done.returncode == 0, done.stderr
    wait_for(lambda: len(session.list_shares()) == 1, timeout=30, what="the share of the remote photo")
    [share] = session.list_shares()
    assert [(i["name"], i["content-type"], i["uri"]) for i in share["items"]] == [("holiday.png", "image/png", uri)]
    complete_share(session, share["id"], [room]).expect_ok()

    # Then the photo arrives with its name and type, byte for byte
    wait_for_state(session, share["id"], "sent")
    [event] = homeserver.messages(user.token, room)
    assert event["content"]["msgtype"] == "m.image"
    assert event["content"]["body"] == "holiday.png"
    assert event["content"]["info"]["mimetype"] == "image/png"
    assert (event["content"]["info"]["w"], event["content"]["info"]["h"]) == (64, 48)
    assert homeserver.download(user.token, event["content"]["url"]) == photo.read_bytes()


def test_an_sftp_server_that_stops_in_the_middle_of_a_read_fails_that_share_within_its_deadline(
        mounted, sftp, tmp_path):
    # Given a large file on the sftp server (sparse: its bytes cost no disk)
    session = mounted
    served = tmp_path / "served"
    served.mkdir()
    big = served / "big.iso"
    with open(big, "wb") as f:
        f.truncate(2 << 30)
    uri = sftp.uri(big)

    # When it is shared, and the server stops answering once Ferry has begun copying it
    answer: dict = {}
    started = time.monotonic()
    call = threading.Thread(target=lambda: answer.update(reply=session.share(uris=[uri], timeout=120)))
    call.start()
    wait_for(lambda: any(p.stat().st_size > 0 for p in (session.state_dir / "spool").glob("*/0")),
             timeout=60, interval=0.005, what="Ferry to begin copying the remote file")
    sftp.signal(signal.SIGSTOP)
    stopped = time.monotonic()
    call.join(120)

    # Then that share is refused, naming the file and why, soon after the deadline
    reply = answer["reply"]
    assert reply.error_name == error_name("RemoteReadFailed"), reply
    assert "big.iso" in reply.error_message and "stopped answering" in reply.error_message
    assert time.monotonic() - stopped < STALL_SECONDS + 15, "the deadline held"
    assert time.monotonic() - started < 120

    # And nothing of it is kept, and the service takes the next share at once
    wait_for(lambda: session.spool_entries() == set(), timeout=10, what="the partial copy to be removed")
    assert session.list_shares() == []
    local = tmp_path / "local.txt"
    local.write_text("still here")
    assert session.share_ok(uris=[file_uri(local)])
