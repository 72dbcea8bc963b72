#!/usr/bin/env python3
"""The package as pip installs it (ctest python_wheel): `python3 -m build --no-isolation --wheel`
gives a wheel that installs into a fresh venv (offline: --no-index, NumPy and SciPy from the
system's site-packages), carries libziggurat, and passes the Python tests there;
importlib.metadata.version("ziggurat") is ziggurat.__version__; `pip uninstall` leaves the venv as
it was; `pip install --no-build-isolation .` installs the same package.

Usage: test_wheel.py WORK_FOLDER [PYTEST ARGS...] (default: the whole python/tests suite)
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CHECK = """
import importlib.metadata, os, sys, ziggurat
assert importlib.metadata.version("ziggurat") == ziggurat.__version__, (importlib.metadata.version("ziggurat"), ziggurat.__version__)
assert ziggurat.__file__.startswith(sys.prefix), ziggurat.__file__
maps = open("/proc/self/maps").read()
assert "ziggurat.libs/libziggurat.so" in maps, "libziggurat is not the wheel's"
import ziggurat.sparse.linalg
print("installed", ziggurat.__version__, "at", os.path.dirname(ziggurat.__file__))
"""


def run(*command, **kwargs):
    print("+", " ".join(map(str, command)), flush=True)
    subprocess.run(list(map(str, command)), check=True, **kwargs)


def venv(folder):
    shutil.rmtree(folder, ignore_errors=True)
    run(sys.executable, "-m", "venv", "--system-site-packages", folder)
    python = folder / "bin" / "python"
    site = Path(subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_path('platlib'))"],
                               check=True, capture_output=True, text=True).stdout.strip())
    return python, site


def listing(site):
    return sorted(str(p.relative_to(site)) for p in site.rglob("*") if "__pycache__" not in p.parts)


def main():
    work = Path(sys.argv[1]).resolve()
    pytest_args = sys.argv[2:] or [str(ROOT / "python" / "tests")]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # only the installed package
    dist = work / "dist"
    shutil.rmtree(dist, ignore_errors=True)
    run(sys.executable, "-m", "build", "--no-isolation", "--wheel", "--outdir", dist, ROOT, env=env)
    wheels = list(dist.glob("ziggurat-*.whl"))
    assert len(wheels) == 1, wheels

    python, site = venv(work / "venv-wheel")
    before = listing(site)
    run(python, "-m", "pip", "install", "--no-index", "--no-deps", wheels[0], env=env)
    run(python, "-c", CHECK, env=env, cwd=work)
    run(python, "-m", "pytest", "-q", "-p", "no:cacheprovider", *pytest_args, env=env, cwd=work)
    run(python, "-m", "pip", "uninstall", "-y", "ziggurat", env=env)
    left = sorted(set(listing(site)) - set(before))
    assert not left, f"pip uninstall left {left}"

    python, site = venv(work / "venv-source")
    before = listing(site)
    run(python, "-m", "pip", "install", "--no-index", "--no-deps", "--no-build-isolation", ROOT, env=env)
    run(python, "-c", CHECK, env=env, cwd=work)
    run(python, "-m", "pip", "uninstall", "-y", "ziggurat", env=env)
    left = sorted(set(listing(site)) - set(before))
    assert not left, f"pip uninstall left {left}"
    print("wheel and source installs: installed, tested and uninstalled cleanly")


if __name__ == "__main__":
    main()
