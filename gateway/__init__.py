"""The gateway: the player API's three doors — gRPC, JSON over HTTP + a WebSocket, and MCP for AI agents —
and the admin door; stateless, routes players to shards."""
