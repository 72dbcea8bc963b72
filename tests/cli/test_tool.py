#!/usr/bin/env python3
"""The tool itself: `ziggurat devices`, `--version`, `cache`, the benchmarks through `ziggurat bench`,
and no command at all.

Usage: test_tool.py PATH/TO/ziggurat
"""
import json
import os
import re
import shutil
import subprocess
import tempfile
import unittest

import cli_support as support
from cli_support import run


class Devices(unittest.TestCase):
    def test_json_lists_devices_with_one_default(self):
        devices = json.loads(run("devices", "--json")[0])["devices"]
        self.assertGreaterEqual(len(devices), 1)
        self.assertEqual(sum(d["default"] for d in devices), 1)
        for d in devices:
            for key in ("name", "platform", "type", "fp64", "global_mem_bytes", "max_alloc_bytes",
                        "max_work_group_size", "preferred_work_group_multiple", "base_address_align_bytes",
                        "compute_units", "driver_version", "host_unified_memory", "nvidia_compute_capability"):
                self.assertIn(key, d)
            self.assertGreaterEqual(d["preferred_work_group_multiple"], 1)

    def test_table_marks_one_default(self):
        out = run("devices")[0]
        self.assertIn("WG mult", out)
        self.assertEqual(len(re.findall(r"^\d+\*\s", out, re.MULTILINE)), 1, out)



class Misc(unittest.TestCase):
    def test_version_and_cache(self):
        self.assertRegex(run("--version")[0], r"\d+\.\d+\.\d+")
        out = run("cache")[0]
        self.assertIn("program cache", out)
        self.assertIn("device profiles", out)

    def test_benchmarks_run_through_the_tool(self):
        bench = os.path.join(os.path.dirname(support.ZIGGURAT), "..", "libexec", "ziggurat", "ziggurat-bench")
        if os.path.exists(bench):
            out = json.loads(run("bench", "build", "--repeat", 1, "--json")[0])
            self.assertGreater(out["cold_build_ms_median"], 0)
            self.assertIn("heat", run("bench", "--help")[0])
        # A tool installed without the optional component says what to do.
        with tempfile.TemporaryDirectory() as folder:
            alone = os.path.join(folder, "bin", "ziggurat")
            os.makedirs(os.path.dirname(alone))
            shutil.copy(support.ZIGGURAT, alone)
            done = subprocess.run([alone, "bench", "heat"], capture_output=True, text=True)
            self.assertEqual(done.returncode, 1)
            self.assertIn("optional component", done.stderr)
            self.assertIn("--component bench", done.stderr)

    def test_no_subcommand_is_a_usage_error(self):
        run(expect=1)


if __name__ == "__main__":
    support.main()
