"""Services: Ray game shards hosting game actors, the Redis store, presence, placement."""
