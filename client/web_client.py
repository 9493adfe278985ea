"""The JSON + WebSocket client of the player API: the same .proto messages in protobuf's JSON
mapping, over HTTP (``POST /v1/{Service}/{Rpc}``) and a WebSocket for Watch."""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator
from typing import Any

import httpx2 as httpx
import websockets
from google.protobuf import json_format
from google.protobuf.message import Message

from archipelago.v1 import game_pb2
from client.base import BaseClient, M
from client.errors import ApiError


def _error(body: Any, http_status: int) -> ApiError:
    e = body.get("error", {}) if isinstance(body, dict) else {}
    return ApiError(status=str(e.get("status", "UNKNOWN")), code=str(e.get("code", "")),
                    field=str(e.get("field", "")), rule=str(e.get("rule", "")),
                    message=str(e.get("message", body)), http_status=http_status)


class WebClient(BaseClient):
    """One HTTP connection pool to a gateway's HTTP port (``http://host:port``)."""

    door = "web"

    def __init__(self, base_url: str, secret: str | None = None, http: httpx.AsyncClient | None = None) -> None:
        super().__init__(secret)
        self.base_url = base_url.rstrip("/")
        self.http = http or httpx.AsyncClient(base_url=self.base_url, timeout=60.0)
        self._owner = http is None

    def with_secret(self, secret: str) -> WebClient:
        return WebClient(self.base_url, secret, self.http)

    def _headers(self) -> dict[str, str]:
        return {"authorization": f"Bearer {self.secret}"} if self.secret else {}

    async def close(self) -> None:
        if self._owner:
            await self.http.aclose()

    async def call(self, service: str, method: str, request: Message, response: type[M]) -> M:
        body = json_format.MessageToDict(request, preserving_proto_field_name=True)
        r = await self.http.post(f"/v1/{service}/{method}", json=body, headers=self._headers())
        data = r.json()
        if r.status_code != 200:
            raise _error(data, r.status_code)
        return json_format.ParseDict(data, response())

    def watch(self, game_id: str, after_seq: int = 0) -> AsyncGenerator[game_pb2.Update, None]:
        return self._stream("/v1/Game/Watch", game_id, after_seq)

    def spectate(self, game_id: str, after_seq: int = 0) -> AsyncGenerator[game_pb2.Update, None]:
        return self._stream("/v1/Community/Spectate", game_id, after_seq)

    async def _stream(self, path: str, game_id: str, after_seq: int) -> AsyncGenerator[game_pb2.Update, None]:
        url = "ws" + self.base_url[len("http"):] + path
        hello: dict[str, Any] = {"game_id": game_id, "after_seq": str(after_seq)}
        if self.secret:
            hello["authorization"] = f"Bearer {self.secret}"
        async with websockets.connect(url, max_size=2**22) as ws:
            await ws.send(json.dumps(hello))
            async for frame in ws:
                data = json.loads(frame)
                if "error" in data:
                    code = ws.close_code or 4000 + int(data["error"].get("http_status", 500))
                    raise _error(data, code - 4000 if code >= 4000 else code)
                yield json_format.ParseDict(data, game_pb2.Update())
