"""No module of bench/ shadows the standard library (issue 19): ``python bench/engine_bench.py`` puts
bench/ first on sys.path, and bench/profile.py then hid the standard ``profile`` module that
cProfile imports (``module 'profile' has no attribute 'run'``)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench"


def test_no_bench_module_is_named_like_a_standard_library_module() -> None:
    names = {p.stem for p in BENCH.glob("*.py")} | {p.name for p in BENCH.iterdir() if (p / "__init__.py").exists()}
    assert names, "bench/ has modules"
    assert not names & sys.stdlib_module_names, sorted(names & sys.stdlib_module_names)


def test_a_bench_file_run_by_path_can_use_cprofile() -> None:
    code = "import cProfile; cProfile.run('1 + 1')"  # with -c, the working directory (bench/) comes first
    done = subprocess.run([sys.executable, "-c", code], cwd=BENCH, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
