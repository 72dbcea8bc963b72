#!/usr/bin/env python3
"""The library's log on stderr (issue 41, item 3): -v, --log-level and ZIGGURAT_LOG_LEVEL choose
what is shown; a fresh cache logs the calibration and the compiles, a warm one the cache hits; the
heat and Poisson plans and the autotuners' decisions (what was timed and what won, or the record
taken) are logged; warnings only by default.

Usage: test_log.py PATH/TO/ziggurat
"""
import pathlib
import re

import cli_support as support
from cli_support import ScratchFolderTest, run

HEAT = ("heat", "--size", "256x256", "--steps", 20, "--device-memory", "1MiB", "--quiet")


class Log(ScratchFolderTest):
    def test_by_default_nothing_below_a_warning_is_logged(self):
        _, err = run(*HEAT)
        self.assertNotRegex(err, r"ziggurat: (info|debug):")

    def test_a_fresh_cache_logs_the_calibration_the_compiles_and_the_plan(self):
        _, err = run(*HEAT, "-v", env={"ZIGGURAT_CACHE_DIR": self.path("cache")})
        self.assertRegex(err, r"ziggurat: info: calibration: measuring .* \(no cached profile\)")
        self.assertRegex(err, r"ziggurat: info: calibration: measured .* in [0-9.]+ s")
        self.assertRegex(err, r"ziggurat: info: program: compiled 'heat_stencil' for .* in [0-9.]+ s")
        self.assertRegex(err, r"ziggurat: info: plan: heat on .*: (in core|(strip|block), n = \d+, tasks owning \d+), "
                              r".* s predicted")
        self.assertNotIn("ziggurat: debug:", err)
        # The same cache again, at debug level: the profile and the programs come from it.
        for flags, env in ((("--log-level", "debug"), {}), (("-vv",), {}), ((), {"ZIGGURAT_LOG_LEVEL": "DEBUG"})):
            _, err = run(*HEAT, *flags, env={"ZIGGURAT_CACHE_DIR": self.path("cache"), **env})
            self.assertRegex(err, r"ziggurat: debug: calibration: the profile of .* from ")
            self.assertIn("ziggurat: debug: program: 'heat_stencil' from the binary cache", err)
            self.assertNotIn("compiled", err)

    def test_verbose_shows_what_the_autotuner_timed_and_chose_then_the_record_it_takes(self):
        cache = {"ZIGGURAT_CACHE_DIR": self.path("cache")}
        solve = ("solve", "--generate", "8x8x8", "--system", "laplace7", "--quiet", "-v")
        _, err = run(*solve, env=cache)
        self.assertRegex(err, r"ziggurat: info: tuning: 'bsr f64 b1 k1 .*' on .*: timed \d+ candidates "
                              r"\((\S+ [0-9.e+-]+ s(, )?)+\); \S+ wins\n")
        winner = re.search(r"; (\S+) wins", err).group(1)
        _, err = run(*solve, env=cache)
        self.assertRegex(err, r"ziggurat: info: tuning: 'bsr f64 b1 k1 .*' on .*: " + re.escape(winner) +
                         r" from the tuning record \(")
        self.assertNotIn("timed", err)
        # A record edited to name a kernel this library does not know is refused, saying why.
        record = next(pathlib.Path(self.path("cache"), "tuning").glob("*/*.json"))
        record.write_text(record.read_text().replace(f'"variant": "{winner}"', '"variant": "warp/9"'))
        _, err = run(*solve, env=cache)
        self.assertRegex(err, r"ziggurat: info: tuning: 'bsr f64 b1 k1 .*' on .*: the tuning record is refused \(.*"
                              r"'warp'.*\); measuring again\n.*timed \d+ candidates")

    def test_the_poisson_plan_is_logged(self):
        _, err = run("poisson", "--size", "10x10x10", "--problem", "manufactured", "--max-sweeps", 20, "--quiet", "-v",
                     expect=2)  # 20 sweeps do not reach the tolerance
        self.assertRegex(err, r"ziggurat: info: plan: poisson on .*: (in core|strip pyramid).* s predicted for 20 sweeps")

    def test_an_unknown_level_is_refused(self):
        _, err = run(*HEAT, "--log-level", "loud", expect=1)
        self.assertIn("the log level is debug, info, warning, error or off, not 'loud'", err)
        _, err = run(*HEAT, expect=1, env={"ZIGGURAT_LOG_LEVEL": "chatty"})
        self.assertIn("not 'chatty'", err)


if __name__ == "__main__":
    support.main()
