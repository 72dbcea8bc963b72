#!/usr/bin/env python3
"""One vocabulary (docs/vocabulary.md): every --json output of the tool and of the benchmarks says
which ziggurat wrote it and its schema, and every old spelling of a renamed option still works the
same, with a warning on stderr.

Usage: test_vocabulary.py PATH/TO/ziggurat
"""
import json
import os

import cli_support as support
from cli_support import MATRICES, ScratchFolderTest, run

SCHEMA = 1
MATRIX = os.path.join(MATRICES, "west0067.mtx")
MESH = "cantilever:1x0.1x0.15:6,2,2"

# One quick run of every command that prints --json.
COMMANDS = [
    ("devices", "--json"),
    ("calibrate", "--json"),
    ("heat", "--size", "33x17", "--steps", 4, "--quiet", "--json"),
    ("poisson", "--size", "10x10x10", "--problem", "manufactured", "--max-sweeps", 3, "--tol", 0, "--quiet", "--json"),
    ("model", "--grid", 1026, "--steps", 10, "--device-memory", "1MiB", "--tau-c", 1, "--tau-a", 0.1, "--json"),
    ("model", "--grid", 130, "--device-memory", "1MiB", "--tau-c", 1, "--tau-a", 0.1, "--sweep", "--json"),
    ("solve", "--generate", "4x4x4", "--block", 2, "--kernel", "rule", "--quiet", "--json"),
    ("spmm", "--matrix", MATRIX, "--repeat", 1, "--json"),
    ("modes", "--mesh", MESH, "--modes", 2, "--quiet", "--json"),
    ("wave", "--size", "41x21", "--dx", 10, "--steps", 5, "--quiet", "--json"),
]
BENCHMARKS = [("bench", "build", "--repeat", 1, "--json"),
              ("bench", "long-vector", "--min-n", 10, "--max-n", 50, "--step-small", 40, "--steps", 2, "--repeat", 1,
               "--json")]

# (old spelling, new spelling, a run that takes either (printing --json), the keys of its output that
# the option sets).
SOLVE = ("solve", "--generate", "4x4x4", "--block", 2, "--kernel", "rule", "--json")
POISSON = ("poisson", "--size", "10x10x10", "--problem", "manufactured", "--max-sweeps", 3, "--tol", 0, "--quiet",
           "--json")
ALIASES = [
    ("--precond", "--preconditioner", (*SOLVE, "{}", "jacobi"), ("preconditioner", "iterations")),
    ("--max-iter", "--max-iterations", (*SOLVE, "--preconditioner", "none", "{}", 200), ("iterations",)),
    ("--tol", "--rtol", (*SOLVE, "{}", 1e-3), ("iterations",)),
    ("--device-mem", "--device-memory", ("model", "--grid", 1026, "--steps", 10, "{}", "1MiB", "--tau-c", 1,
                                         "--tau-a", 0.1, "--json"), ("budget_bytes",)),
    ("--device-mem", "--device-memory", ("heat", "--size", "33x17", "--steps", 4, "{}", "1MiB", "--quiet", "--json"),
     ("budget_bytes",)),
    ("--device-mem", "--device-memory", (*POISSON, "{}", "1MiB"), ("budget_bytes",)),
]


def bench_built():
    return os.path.exists(os.path.join(os.path.dirname(support.ZIGGURAT), "..", "libexec", "ziggurat",
                                       "ziggurat-bench"))


class Vocabulary(ScratchFolderTest):
    def test_every_json_output_carries_the_version_and_schema(self):
        version = run("--version")[0].split()[-1]
        for args in COMMANDS + (BENCHMARKS if bench_built() else []):
            with self.subTest(command=" ".join(map(str, args))):
                out = json.loads(run(*args)[0])
                self.assertIsInstance(out, dict)
                self.assertEqual(out["ziggurat_version"], version)
                self.assertEqual(out["schema"], SCHEMA)
                if args[0] != "calibrate":  # the profile file keeps its own key (docs/vocabulary.md)
                    self.assertNotIn("library_version", out)

    def test_units_are_suffixed_in_every_json_output(self):
        # docs/vocabulary.md, schema 1: no key names a time or a rate by a bare word.
        def keys(value):
            if isinstance(value, dict):
                for k, v in value.items():
                    yield k
                    yield from keys(v)
            elif isinstance(value, list):
                for v in value:
                    yield from keys(v)
        for args in COMMANDS[2:]:
            with self.subTest(command=args[0]):
                found = set(keys(json.loads(run(*args)[0])))
                self.assertFalse(found & {"seconds", "eta_seconds", "nodes_per_second", "mnodes_per_second", "dt",
                                          "dx", "dt_limit", "times_s"}, found)

    def test_each_old_spelling_works_as_the_new_one_and_warns(self):
        for old, new, template, keys in ALIASES:
            with self.subTest(option=old, command=template[0]):
                now, quiet = run(*[new if part == "{}" else part for part in template])
                before, warned = run(*[old if part == "{}" else part for part in template])
                now, before = json.loads(now), json.loads(before)
                self.assertEqual([before[k] for k in keys], [now[k] for k in keys])
                self.assertNotIn("deprecated", quiet)
                self.assertIn(f"warning: {old} is deprecated and goes in the next version: use {new}", warned)
        _, err = run("solve", "--generate", "4x4x4", "--block", 2, "--precond", "jacobi", "--preconditioner",
                     "ilu0", expect=1)
        self.assertIn("--precond is the old spelling of --preconditioner: give one of the two", err)


if __name__ == "__main__":
    support.main()
