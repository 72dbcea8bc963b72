"""What the command-line tool's test files share: the tool's path, running it, scratch folders, the
plan a run must show, the test's own Matrix Market reader; and, from tests/support/references.py
(shared with the Python package's tests), the NumPy references of the schemes.

Each test file runs as: test_FILE.py PATH/TO/ziggurat (main() reads the path).
"""
import functools
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest
import zlib

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from references import numpy_heat, numpy_jacobi  # noqa: E402,F401  (re-exported to the test files)

ZIGGURAT = None
MATRICES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "matrices")


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


def tuned_or_given(summary, args):
    """(depth, group) a run's plan must show: --depth N as given; with --depth auto, or none on a GPU
    (tuned there by default), a candidate of its depth_tuning ("1" or "<depth>/<x>x<y>"): for heat the
    depth_plans entry predicted fastest (the smaller depth on ties; depth and height chosen together),
    else the fastest candidate; else single steps."""
    given = args[args.index("--depth") + 1] if "--depth" in args else None
    if given not in (None, "auto"):
        return int(given), "default"
    if "depth_plans" in summary:
        chosen = min(summary["depth_plans"], key=lambda plan: plan["predicted_s"])["candidate"]
    elif given == "auto" or "depth_tuning" in summary:
        candidates = summary["depth_tuning"]["ns_per_node"]
        chosen = min(candidates, key=candidates.get)
    else:
        return 1, "default"
    depth, _, group = chosen.partition("/")
    return int(depth), group or "default"


@functools.lru_cache(maxsize=None)
def default_device():
    """The default device's entry of `ziggurat devices --json` (type, compute_units, ...)."""
    return next(d for d in json.loads(run("devices", "--json")[0])["devices"] if d["default"])


def auto_ilu0_ordering(block_size, skewed=False, dominant=False):
    """Ordering auto's choice for ILU(0) on the default device with sweep auto (solver/krylov.hpp,
    jacobi_sweeps_chosen and chosen_ordering): natural on a CPU device of at most 4 compute units,
    else natural (with Jacobi sweeps) for a diagonally dominant scalar system, else colours for
    blocks of 1 to 3 unless the matrix is skewed (skewness above 0.05), else natural."""
    device = default_device()
    if device["type"] == "cpu" and device["compute_units"] <= 4:
        return "natural"
    if block_size == 1 and dominant:
        return "natural"
    return "colours" if block_size <= 3 and not skewed else "natural"


def read_mtx(path):
    """A dense float64 array from a Matrix Market coordinate file (real or pattern, general or
    symmetric): the test's own reader, independent of ziggurat's."""
    with open(path) as f:
        banner = f.readline().lower().split()
        lines = [line for line in f if line.strip() and not line.startswith("%")]
    rows, cols, _ = map(int, lines[0].split())
    a = np.zeros((rows, cols))
    for line in lines[1:]:
        parts = line.split()
        i, j = int(parts[0]) - 1, int(parts[1]) - 1
        v = 1.0 if banner[3] == "pattern" else float(parts[2])
        a[i, j] += v
        if banner[4] == "symmetric" and i != j:
            a[j, i] += v
    return a


def cache_with_profile(path):
    """A new cache folder at `path` holding the device profiles of the tool's own cache (measured once
    for the whole suite, or now): for tests of a cold tuning or program cache that are not about
    calibration, which would otherwise measure the device again. Returns path."""
    run("calibrate")  # the default device's profile, cached
    profiles = re.search(r"^device profiles (.*): ", run("cache")[0], re.M).group(1)
    os.makedirs(os.path.join(path, "profiles"))
    for name in os.listdir(profiles):
        if name.endswith(".json"):
            shutil.copy(os.path.join(profiles, name), os.path.join(path, "profiles", name))
    return path


def digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def read_png(path):
    """The pixels of an 8-bit RGB, non-interlaced PNG (what ziggurat writes) as an array (height,
    width, 3), decoded here from its IDAT chunks and row filters (no imaging package needed)."""
    with open(path, "rb") as f:
        data = f.read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    at, idat = 8, b""
    while at < len(data):
        length, kind = int.from_bytes(data[at:at + 4], "big"), data[at + 4:at + 8]
        body = data[at + 8:at + 8 + length]
        if kind == b"IHDR":
            width, height = int.from_bytes(body[:4], "big"), int.from_bytes(body[4:8], "big")
            assert body[8:13] == bytes([8, 2, 0, 0, 0]), f"{path} is not 8-bit RGB, non-interlaced"
        elif kind == b"IDAT":
            idat += body
        at += 12 + length
    raw, stride = zlib.decompress(idat), 3 * width
    pixels = np.zeros((height, stride), dtype=np.int32)
    for y in range(height):
        kind, row = raw[y * (stride + 1)], np.frombuffer(raw, np.uint8, stride, y * (stride + 1) + 1).astype(np.int32)
        above = pixels[y - 1] if y > 0 else np.zeros(stride, dtype=np.int32)
        if kind in (0, 2):  # none, up
            pixels[y] = (row + (above if kind == 2 else 0)) % 256
            continue
        out = pixels[y]
        for x in range(stride):
            left = out[x - 3] if x >= 3 else 0
            up_left = above[x - 3] if x >= 3 else 0
            if kind == 1:
                guess = left
            elif kind == 3:
                guess = (left + above[x]) // 2
            else:  # Paeth
                p = left + above[x] - up_left
                pa, pb, pc = abs(p - left), abs(p - above[x]), abs(p - up_left)
                guess = left if pa <= pb and pa <= pc else above[x] if pb <= pc else up_left
            out[x] = (row[x] + guess) % 256
    return pixels.reshape(height, width, 3).astype(np.uint8)


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


def kill_tree(pid):
    """SIGKILL to `pid` and every process under it, children first (mpirun's ranks, say)."""
    children = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout.split()
    for child in map(int, children):
        kill_tree(child)
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def stop_after_first_progress(command, marker, stop, env=None):
    """Runs `command` with a progress line at every step of its progress, and calls stop(job) (which
    sends the signal) once stderr shows `marker`. Returns (returncode, stderr)."""
    job = subprocess.Popen(list(map(str, command)), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                           env={**(env or os.environ), "ZIGGURAT_PROGRESS_SECONDS": "0"})
    seen = ""
    try:
        while marker not in seen:
            line = job.stderr.readline()
            if not line:
                job.wait()
                raise AssertionError(f"the run ended before its first progress line ({marker}):\n{seen}")
            seen += line
        stop(job)
        _, err = job.communicate(timeout=300)
    finally:
        if job.poll() is None:  # a failed stop() or a timeout: no run (nor its MPI ranks) outlives its test
            kill_tree(job.pid)
            job.communicate(timeout=60)
    return job.returncode, seen + err


class TimedResult(unittest.TextTestResult):
    """A result that keeps each test's wall time, for the slowest list main() prints. (Python 3.12's
    own `durations` is None unless unittest runs with --durations, hence a name of its own.)"""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.wall_times = []

    def startTest(self, test):
        self.started = time.perf_counter()
        super().startTest(test)

    def stopTest(self, test):
        self.wall_times.append((time.perf_counter() - self.started, test.id()))
        super().stopTest(test)


def main():
    """Runs the calling file's tests against the ziggurat given as the first argument (further
    arguments as unittest takes them, e.g. a class or test name), then prints the slowest tests."""
    global ZIGGURAT
    ZIGGURAT = os.path.abspath(sys.argv.pop(1))
    runner = unittest.TextTestRunner(verbosity=2, resultclass=TimedResult)
    program = unittest.main(module="__main__", testRunner=runner, exit=False)
    wall_times = sorted(program.result.wall_times, reverse=True)
    if wall_times:
        print("\nslowest tests:", file=sys.stderr)
        for seconds, name in wall_times[:10]:
            print(f"  {seconds:7.2f} s  {name}", file=sys.stderr)
    sys.exit(not program.result.wasSuccessful())
