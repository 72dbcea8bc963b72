#!/usr/bin/env python3
"""`ziggurat calibrate`: the device profile as JSON and as text, cached, and measured again when forced.

Usage: test_calibrate.py PATH/TO/ziggurat
"""
import json
import unittest

import cli_support as support
from cli_support import run


class Calibrate(unittest.TestCase):
    def test_json_profile_then_cached_then_forced(self):
        profile = json.loads(run("calibrate", "--json")[0])
        for key in ("upload_pinned", "download_pinned", "upload_pageable", "download_pageable", "upload_rect",
                    "download_rect", "overlap", "launch_pipelined_s", "kernels", "numstreams", "library_version",
                    "device", "driver", "date"):
            self.assertIn(key, profile)
        self.assertGreater(profile["upload_pinned"]["bytes_per_s"], 0)
        self.assertGreaterEqual(profile["numstreams"], 1)
        out = run("calibrate")[0]
        self.assertIn("loaded from", out)
        self.assertIn("host->device pinned", out)
        self.assertIn("tau_a heat2d_box", out)
        self.assertTrue(run("calibrate", "--force")[0].splitlines()[1].startswith("measured "))


if __name__ == "__main__":
    support.main()
