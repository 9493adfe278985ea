"""The gateway: gRPC (and later web and MCP) front door; stateless, routes players to shards."""
