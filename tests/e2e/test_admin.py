"""The operators' door end to end (issue 13): `archipelago serve` with ARCHIPELAGO_ADMIN_TOKEN set, and the
`archipelago admin …` commands a user runs against it."""

from __future__ import annotations

import asyncio
import json
import re
import secrets
from pathlib import Path

import pytest

from archipelago.v1 import lobby_pb2, notify_pb2
from client.grpc_client import Client
from tests.e2e.helpers import WAIT_S, connected
from tests.e2e.serving import run, serving, wait_healthy
from tests.notify.receivers import WebhookReceiver

pytestmark = pytest.mark.e2e


async def test_an_operator_lists_inspects_and_ends_a_game_with_the_cli(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    token = secrets.token_urlsafe(32)
    token_file = tmp_path / "admin-token"
    token_file.write_text(token + "\n")
    reason = "test of the admin door " + secrets.token_hex(4)
    failing_hook = WebhookReceiver(default_status=500)
    with failing_hook, serving(tmp_path, extra_env={"ARCHIPELAGO_ADMIN_TOKEN": token, **failing_hook.env(),
                                                    "ARCHIPELAGO_NOTIFY_BACKOFF_S": "60"}) as (address, http, proc):
        await asyncio.to_thread(wait_healthy, address, proc)
        code_, out = await run("create", "salvo", "--speed", "60", "--server", address)
        assert code_ == 0, out
        game_id = re.search(r"^game: (\w+)$", out, re.M)
        code = re.search(r"^code: (\w{6})$", out, re.M)
        secret = re.search(r"^secret: (\S+)$", out, re.M)
        assert game_id and code and secret, out
        async with Client(address, secret[1]) as host, Client(address) as guest:
            await guest.join(code[1], "guest")
            await guest.call("Game", "SetNotifications", notify_pb2.SetNotificationsRequest(
                game_id=game_id[1], webhook=notify_pb2.WebhookSetting(url=failing_hook.url("guest"))),
                notify_pb2.NotificationSettings)
            await host.start(game_id[1])

            monkeypatch.setenv("ARCHIPELAGO_ADMIN_TOKEN", token)  # (the commands below inherit it)
            rc, shards = await run("admin", "shards", "--url", http)  # the old name of --server: still taken
            assert rc == 0 and "--url is deprecated: use --server" in shards, shards
            assert re.search(r"^SHARD\s+STATE\s+PID\s+LIVE\s+FINISHED\s+ARMED", shards, re.M), shards
            assert re.search(r"^shard-0\s+active\s+\d+", shards, re.M) and re.search(r"^shard-1\s+active", shards, re.M)

            # the guest's webhook answers 500: the operators see that channel failing, without its URL
            await asyncio.to_thread(failing_hook.wait_for, 1, WAIT_S)
            async with asyncio.timeout(WAIT_S):
                while True:
                    rc, failing = await run("admin", "notifications", "--server", http)
                    if "webhook" in failing:
                        break
                    await asyncio.sleep(0.1)  # (the failure is recorded just after the receiver answered)
            row = rf"^{game_id[1]}\s+1\s+webhook\s+failing\s+\d+\s+.+500"
            assert rc == 0 and re.search(row, failing, re.M), failing
            assert "outbox:" in failing and "127.0.0.1" not in failing and "/hook/" not in failing, failing

            monkeypatch.delenv("ARCHIPELAGO_ADMIN_TOKEN")
            rc, shown = await run("admin", "game", game_id[1], "--server", http, "--token-file", str(token_file))
            assert rc == 0, shown
            assert re.search(rf"^game\s+{game_id[1]} \(salvo, code {code[1]}, private\)$", shown, re.M), shown
            assert re.search(r"^status\s+running, round 0$", shown, re.M), shown
            assert re.search(r"^0\s+host \(host\)\s+no\s+no\s+no$", shown, re.M), shown
            assert re.search(r"^1\s+guest\s+no\s+no\s+no$", shown, re.M), shown
            shard = re.search(r"^shard\s+(shard-\d)$", shown, re.M)
            assert shard, shown
            assert guest.secret and secret[1] not in shown and guest.secret not in shown

            rc, listed = await run("admin", "games", "--shard", shard[1], "--server", http,
                                   "--token-file", str(token_file))
            assert rc == 0 and re.search(rf"^{game_id[1]}\s+salvo\s+running\s+0\s+\d+ s\s+3\s+2/2\s+yes$",
                                         listed, re.M), listed

            async with connected(guest, game_id[1]) as stream:
                rc, ended = await run("admin", "end", game_id[1], "--reason", reason, "--server", http,
                                      "--token-file", str(token_file))
                assert rc == 0, ended
                assert f"ended game {game_id[1]}" in ended and "no winner (an operator ended the game)" in ended, ended
                async with asyncio.timeout(WAIT_S):
                    updates = await stream  # the stream ends after game_over
            assert updates[-1].kind == "game_over" and updates[-1].status == lobby_pb2.GAME_STATUS_OVER
            view = await host.view(game_id[1])
            assert view.status == lobby_pb2.GAME_STATUS_OVER and view.salvo.outcome.reason == "ended"

            rc, again = await run("admin", "end", game_id[1], "--server", http, "--token-file", str(token_file))
            assert rc == 0 and f"game {game_id[1]} was already over" in again, again
            rc, over = await run("admin", "game", game_id[1], "--server", http.removeprefix("http://"),
                                 "--token-file", str(token_file))  # (HOST:PORT, as the player commands take)
            assert rc == 0 and re.search(r"^outcome\s+no winner \(an operator ended the game\)$", over, re.M), over
            rc, raw = await run("admin", "game", game_id[1], "--json", "--server", http,
                                "--token-file", str(token_file))
            assert rc == 0, raw
            assert json.loads(raw)["status"] == "over" and json.loads(raw)["outcome"]["reason"] == "ended"

        wrong = tmp_path / "wrong-token"
        wrong.write_text(secret[1])  # a player's secret is not the operator token
        rc, refused = await run("admin", "shards", "--server", http, "--token-file", str(wrong))
        assert rc == 2 and "auth/unauthenticated" in refused and "not the operator token" in refused, refused
    log = proc.output()  # (serve has stopped: all it wrote)
    assert f"game {game_id[1]} ended by an operator (reason: {reason!r})" in log, log[-2000:]
    assert token not in log
    assert "admin: /admin/ on the HTTP port" in log  # serve says the door is open
