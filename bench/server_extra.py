"""One-file ``mtplint check`` with and without the ``server`` extra installed (issue #25).

Two installs of the same checkout, one with ``pip install -e '.[server]'`` (or ``.[test]``, which
includes it) and one with ``pip install -e .``, lint the same compose file in turns, so both meet
the same load on the machine::

    python bench/server_extra.py WITH/bin/mtplint WITHOUT/bin/mtplint [--rounds 10]

It prints each install's median and fastest wall time, the ratio of the medians and the modules a
check loads in each (the same list when the extra costs a check nothing: nothing of pygls,
lsprotocol or ``mtplint.server`` is imported).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "vllm-compose"
MODULES = ("import io, sys\nfrom mtplint.cli import main\n"
           "main(['check', '--no-cache', 'compose.yaml'], out=io.StringIO())\nprint('\\n'.join(sorted(sys.modules)))")


def _modules(executable: str, cwd: Path) -> list[str]:
    python = str(Path(executable).with_name("python"))
    done = subprocess.run([python, "-c", MODULES], capture_output=True, text=True, cwd=cwd, check=True)
    return done.stdout.split()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("with_extra", help="the mtplint executable of the install with the extra")
    parser.add_argument("without_extra", help="the mtplint executable of the install without it")
    parser.add_argument("--rounds", type=int, default=10)
    args = parser.parse_args()
    # run from a temporary folder: the executables by absolute path (not resolved: a venv's
    # python is a link, and it finds its packages by the path it is started from)
    args.with_extra, args.without_extra = os.path.abspath(args.with_extra), os.path.abspath(args.without_extra)
    with tempfile.TemporaryDirectory() as folder:
        project = Path(folder)
        for name in ("compose.yaml", ".env"):
            shutil.copy(EXAMPLE / name, project / name)
        times: dict[str, list[float]] = {args.with_extra: [], args.without_extra: []}
        for _ in range(args.rounds):
            for executable in times:  # in turns: both see the same load
                start = time.perf_counter()
                subprocess.run([executable, "check", "--no-cache", "compose.yaml"], cwd=project, capture_output=True,
                               check=False)
                times[executable].append(time.perf_counter() - start)
        for executable, measured in times.items():
            print(f"{executable}: median {statistics.median(measured) * 1000:.0f} ms, "
                  f"fastest {min(measured) * 1000:.0f} ms")
        ratio = statistics.median(times[args.with_extra]) / statistics.median(times[args.without_extra])
        print(f"with / without the extra (medians): {ratio:.2f}x; load average {os.getloadavg()[0]:.1f}")
        same = _modules(args.with_extra, project) == _modules(args.without_extra, project)
        print(f"modules a check loads: {'the same' if same else 'DIFFERENT'}")


if __name__ == "__main__":
    main()
