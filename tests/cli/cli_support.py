"""What the command-line tool's test files share: the tool's path, running it, scratch folders;
and, from tests/support/references.py (shared with the Python package's tests), the NumPy
references of the schemes.

Each test file runs as: test_FILE.py PATH/TO/ziggurat (main() reads the path).
"""
import hashlib
import os
import subprocess
import sys
import tempfile
import unittest

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from references import numpy_heat, numpy_jacobi  # noqa: E402,F401  (re-exported to the test files)

ZIGGURAT = None


def lsan_tracer_crash(done):
    """LeakSanitizer's own tracer died at exit (a known sanitizer flake, google/sanitizers#1353): no
    leak was reported and nothing else failed."""
    return ("Tracer caught signal" in done.stderr and "LeakSanitizer has encountered a fatal error" in done.stderr
            and "SUMMARY:" not in done.stderr and "ERROR: AddressSanitizer" not in done.stderr)


def run(*args, expect=0, env=None):
    """Runs ziggurat (with `env` added to the environment); checks its exit code; returns (stdout, stderr).
    A run whose only failure was LeakSanitizer's tracer crashing at exit is run once more."""
    def once():
        return subprocess.run([ZIGGURAT, *map(str, args)], capture_output=True, text=True, timeout=600,
                              env={**os.environ, **(env or {})})
    done = once()
    if done.returncode != expect and lsan_tracer_crash(done):
        print(f"ziggurat {' '.join(map(str, args))}: LeakSanitizer's tracer crashed at exit; run again",
              file=sys.stderr)
        done = once()
    if done.returncode != expect:
        raise AssertionError(f"ziggurat {' '.join(map(str, args))} exited {done.returncode}, expected {expect}\n"
                             f"stdout:\n{done.stdout}\nstderr:\n{done.stderr}")
    return done.stdout, done.stderr


def digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


class ScratchFolderTest(unittest.TestCase):
    """A test with its own temporary folder."""

    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.tmp = self.dir.name

    def tearDown(self):
        self.dir.cleanup()

    def path(self, name):
        return os.path.join(self.tmp, name)


def mpi_environment():
    """The environment of an mpirun run. Open MPI's plugins leak, and are unloaded at MPI_Finalize, so
    LeakSanitizer cannot name them for a suppression: leak checks are off for mpirun runs only (ASan's
    others stay on)."""
    return {**os.environ, "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
            "ASAN_OPTIONS": "detect_leaks=0"}


def main():
    """Runs the calling file's tests against the ziggurat given as the first argument."""
    global ZIGGURAT
    ZIGGURAT = os.path.abspath(sys.argv.pop(1))
    unittest.main(module="__main__", verbosity=2)
