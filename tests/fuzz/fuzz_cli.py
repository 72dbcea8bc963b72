#!/usr/bin/env python3
"""Random argument vectors for every command of the `ziggurat` tool, a fixed number of them.

Each run picks a command and a few of its options (read from `ziggurat COMMAND --help`), gives
them hostile values by their type (nan, inf, huge, negative, empty, garbage; folders, devices,
missing, empty and damaged files, in place of files), on top of arguments that keep a run small.
It FAILS, printing the seed and the argument vector, on an internal error (status 3 or the words
"internal error"), a signal, a status other than 0, 1 and 2, or a run longer than the per-run
limit. The seed and the number of runs make the whole pass reproducible, whatever the machine's
speed (a time budget ran as many vectors as the load allowed).

    fuzz_cli.py PATH/TO/ziggurat [--runs 300] [--seed 38] [--timeout 120]
"""
import argparse
import os
import random
import re
import shlex
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
MATRIX = os.path.join(HERE, "..", "data", "matrices", "bcsstk01.mtx")

# What keeps each command small (a fuzzed option takes the place of its base value: CLI11 refuses an
# option given twice), and options that are slow by design.
MATRIX_COPY = "matrix.mtx"  # in the run's folder: the fuzzer may name it as an output
BASE = {
    "devices": [],
    "heat": ["--size", "17x9", "--steps", "2", "--quiet"],
    "poisson": ["--size", "8x8x8", "--problem", "manufactured", "--max-sweeps", "6", "--quiet"],
    "solve": ["--generate", "3x3x3", "--block", "2", "--max-iterations", "30", "--kernel", "rule", "--quiet"],
    "spmm": ["--matrix", MATRIX_COPY, "--repeat", "1", "--kernel", "row"],
    "modes": ["--mesh", "cantilever:1x0.1x0.1:4,1,1", "--modes", "2", "--max-iterations", "4", "--quiet",
              "--scatter", "colouring", "--projection", "tiles"],
    "wave": ["--size", "21x11", "--steps", "4", "--quiet"],
    "calibrate": [],
    "model": ["--grid", "130", "--device-memory", "1MiB", "--tau-c", "1", "--tau-a", "0.1"],
    "cache": [],
}
# A measurement, a tuning, or every kernel compiled again.
SLOW = {("calibrate", "--force"), ("heat", "--depth"), ("poisson", "--depth"), ("cache", "--clear")}

NUMBERS = ["nan", "-nan", "inf", "-inf", "1e999", "1e308", "-1", "0", "-0", "1e-320", "0.5", "3", "1e18",
           "18446744073709551616", "0x10", "", " ", "abc", "1,2", "1e3x2"]
COUNTS = ["-1", "0", "1", "2", "3", "17", "99999999999999999999", "18446744073709551615", "0x10", "010", "1.5",
          "", "auto", "abc"]
TEXTS = ["", " ", "auto", "none", "x", "0", "-1", "nan", "1x1", "0x0x0", "3x3x3", "100000x100000",
         "4000000000x4000000000", "9x9x9x9", "1,2,3", "a,b", ",,", "cantilever:1x1x1:0,0,0",
         "cantilever:1x1x1:99999,99999,99999", "cantilever:nanx1x1:2,2,2", "-3000,1700,2500", "1e308,1e308",
         "nan,nan", "gpu", "all", "platform:none", "0/0", "f16", "multirow/0", "\u00e9\u00e9"]


def make_files(folder):
    """Files of every kind, all in `folder` but a few devices: any of them may be written to."""
    def write(name, data):
        path = os.path.join(folder, name)
        with open(path, "wb") as f:
            f.write(data)
        return path

    np.save(os.path.join(folder, "grid.npy"), np.random.default_rng(0).random((9, 17), np.float32))
    np.save(os.path.join(folder, "cube.npy"), np.zeros((8, 8, 8)))
    np.save(os.path.join(folder, "nan.npy"), np.full((9, 17), np.nan))
    np.save(os.path.join(folder, "empty2.npy"), np.zeros((0, 2)))
    np.save(os.path.join(folder, "ints.npy"), np.arange(12, dtype=np.int32).reshape(3, 4))
    os.mkdir(os.path.join(folder, "folder.npy"))
    return [os.path.join(folder, "grid.npy"), os.path.join(folder, "cube.npy"), os.path.join(folder, "nan.npy"),
            os.path.join(folder, "empty2.npy"), os.path.join(folder, "ints.npy"), os.path.join(folder, "folder.npy"),
            write("empty.bin", b""), write("huge_header.npy", b"\x93NUMPY\x02\x00\xff\xff\xff\xff{'descr'"),
            write("big.mtx", b"%%MatrixMarket matrix coordinate real general\n4000000000 4000000000 1\n1 1 1\n"),
            write("bad.mtx", b"%%MatrixMarket matrix coordinate real general\n2 2 1\n3 3 1\n"),
            write("layers.json", b'[{"top": 0, "vp": 3000, "vs": 1700, "rho": 2500}]'),
            write("bad.json", b'{"top": "x"'), write("list.json", b"[]"),
            write("matrix.mtx", open(MATRIX, "rb").read()), folder, os.path.join(folder, "missing.npy"),
            "/dev/null", "/dev/zero", "/dev/full"]


def option_types(tool, command):
    """{option: type} from `ziggurat COMMAND --help` (FLOAT..., INT..., TEXT, FILE, DIR, PREFIX, or
    FLAG for an option without a value)."""
    text = subprocess.run([tool, command, "--help"], capture_output=True, text=True, timeout=60).stdout
    types = {}
    for line in text.splitlines():
        match = re.match(r"\s+(--[a-z0-9-]+)(?:,\s*-\w)?(?:\s+([A-Z][A-Z0-9_:>=.<]*))?", line)
        if match and match.group(1) not in ("--help",):
            types[match.group(1)] = match.group(2) or "FLAG"
    return types


def value_for(kind, random_, files, folder):
    if kind == "FLAG":
        return None
    if kind.startswith("FLOAT"):
        return random_.choice(NUMBERS)
    if kind.startswith("INT") or kind.startswith("UINT"):
        return random_.choice(COUNTS)
    if kind == "FILE":  # an input or an output: any path
        return random_.choice(files + [os.path.join(folder, f"out{random_.randrange(4)}.npy")])
    if kind == "PREFIX":  # PREFIX-name.npy files
        return random_.choice([os.path.join(folder, "model"), files[0], os.path.join(folder, "missing", "m")])
    if kind == "DIR":
        return random_.choice([folder, files[0], os.path.join(folder, "missing")])
    return random_.choice(TEXTS + files[:3])


def base_options(command):
    """BASE[command] as {option: [its value, or nothing for a flag]}."""
    options, current = {}, None
    for word in BASE[command]:
        if word.startswith("--"):
            current = word
            options[current] = []
        else:
            options[current].append(word)
    return options


def argv_for(command, types, random_, files, folder):
    options = base_options(command)
    chosen = [o for o in types if (command, o) not in SLOW]
    for option in random_.sample(chosen, min(len(chosen), random_.randint(1, 4))):
        value = value_for(types[option], random_, files, folder)
        options[option] = [] if value is None else [value]
    return [command] + [word for option, values in options.items() for word in (option, *values)]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("ziggurat")
    parser.add_argument("--runs", type=int, default=300, help="how many argument vectors to run")
    parser.add_argument("--seed", type=int, default=int(os.environ.get("ZIGGURAT_FUZZ_SEED", "38")))
    parser.add_argument("--timeout", type=float, default=120, help="the most one run may take, seconds")
    a = parser.parse_args()
    a.ziggurat = os.path.abspath(a.ziggurat)  # the runs start in a scratch folder
    random_ = random.Random(a.seed)
    with tempfile.TemporaryDirectory() as folder:
        files = make_files(folder)
        types = {command: option_types(a.ziggurat, command) for command in BASE}
        start, runs, statuses, slowest = time.monotonic(), 0, {}, (0.0, "")
        while runs < a.runs:
            command = random_.choice(sorted(BASE))
            args = argv_for(command, types[command], random_, files, folder)
            line = f"{shlex.quote(a.ziggurat)} {' '.join(shlex.quote(arg) for arg in args)}"
            began = time.monotonic()
            try:
                done = subprocess.run([a.ziggurat, *args], capture_output=True, encoding="utf-8", errors="replace",
                                      timeout=a.timeout, stdin=subprocess.DEVNULL, cwd=folder)
            except subprocess.TimeoutExpired:
                sys.exit(f"FAILED (seed {a.seed}, run {runs}): no answer within {a.timeout} s:\n{line}")
            runs += 1
            slowest = max(slowest, (time.monotonic() - began, line))
            statuses[done.returncode] = statuses.get(done.returncode, 0) + 1
            if done.returncode not in (0, 1, 2) or "internal error" in done.stderr:
                sys.exit(f"FAILED (seed {a.seed}, run {runs}): status {done.returncode}:\n{line}\n"
                         f"stderr:\n{done.stderr[-4000:]}")
        print(f"{runs} runs in {time.monotonic() - start:.0f} s, seed {a.seed}, statuses "
              f"{dict(sorted(statuses.items()))}: no internal error, crash or hang; the slowest, "
              f"{slowest[0]:.1f} s: {slowest[1]}")


if __name__ == "__main__":
    main()
