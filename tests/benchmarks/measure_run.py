"""Run a command and report its wall time, CPU time and peak memory over its whole process tree (on demand:
``python tests/benchmarks/measure_run.py -- pimmodel emulate ...``).

Peak memory is the largest sum of the resident set sizes of the command and all its descendants, sampled every
``--every`` seconds (psutil), so worker processes count together; CPU is user + system of the whole tree (the
command's rusage after it exits, which includes every descendant it waited for)."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
import subprocess
import sys
import time


def main() -> None:
    import psutil

    parser = argparse.ArgumentParser()
    parser.add_argument("--every", type=float, default=0.5)
    parser.add_argument("--out", default="")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    start = time.perf_counter()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.Popen(command, stdout=open(args.out, "w") if args.out else None)  # noqa: SIM115
    root = psutil.Process(proc.pid)
    peak = 0
    while proc.poll() is None:
        try:
            tree = [root, *root.children(recursive=True)]
            total = 0
            for p in tree:
                with contextlib.suppress(psutil.NoSuchProcess):
                    total += p.memory_info().rss
            peak = max(peak, total)
        except psutil.NoSuchProcess:
            pass
        time.sleep(args.every)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    print(json.dumps({"exit_code": proc.returncode, "wall_s": wall, "cpu_s": cpu, "peak_tree_rss_bytes": peak,
                      "largest_process_rss_bytes": after.ru_maxrss * 1024, "command": command}), file=sys.stderr)
    sys.exit(proc.returncode)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    main()
