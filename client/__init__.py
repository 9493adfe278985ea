"""Clients of the player API: the gRPC and JSON + WebSocket clients, the autopilot bot, terminal play
and the `archipelago` command.  Imports only the generated protobuf code (``archipelago.v1``) and the
pure rules (``engine``), never the server (``gateway``, ``services``, Ray) — but for two commands:
``archipelago serve``, which the command hands to the server's own (:mod:`gateway.serve`), and
``archipelago replay``, which replays an export with the pure :mod:`services.replay` (no I/O).
tests/client/test_isolation.py and test_import_graph.py check it, and that the package has no import
loop."""
