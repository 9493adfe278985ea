"""A process for tests/services/test_supervision.py to kill -9: it takes a data directory's lock, starts a
private redis-server (from the main thread or a short-lived one) or the whole embedded cluster, prints one
line when ready, then waits for end-of-file on its standard input."""

from __future__ import annotations

import sys
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from services.cluster import RedisProcess, lock_data_dir, start_embedded, start_redis_server


def main(mode: str, data_dir: Path) -> None:
    if mode == "lock":
        lock_data_dir(data_dir)
        print("READY", flush=True)
    elif mode in ("redis", "redis-from-thread"):
        started: list[RedisProcess] = []
        if mode == "redis":
            started.append(start_redis_server(data_dir, durable=False))
        else:  # the forking thread ends at once: the redis-server must not die with it
            thread = threading.Thread(target=lambda: started.append(start_redis_server(data_dir, durable=False)))
            thread.start()
            thread.join()
        proc = started[0].proc
        assert proc is not None
        print("READY", proc.pid, started[0].url, flush=True)
    elif mode == "embedded":
        start_embedded(shards=1, data_dir=data_dir)
        print("READY", flush=True)
    else:
        raise SystemExit(f"unknown mode {mode}")
    sys.stdin.read()


if __name__ == "__main__":
    main(sys.argv[1], Path(sys.argv[2]))
