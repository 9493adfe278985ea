"""Clients of the player API: the gRPC and JSON + WebSocket clients, the autopilot bot, terminal play
and the `archipelago` command.  Imports only the generated protobuf code (``archipelago.v1``) and the
pure rules (``engine``), never the server (``gateway``, ``services``, Ray)."""
