"""The compiled module links the library and its application layer, nothing of the CLI's
presentation: no libpng, PLplot or CLI11 (issue 39), so that installing the package needs none."""

import shutil
import subprocess

import pytest

import ziggurat._core as core

PRESENTATION = ("libpng", "plplot", "cli11")


@pytest.mark.skipif(shutil.which("ldd") is None, reason="ldd is not installed")
def test_the_module_links_no_presentation_library():
    libraries = subprocess.run(["ldd", core.__file__], check=True, capture_output=True, text=True).stdout
    assert "libziggurat_app" in libraries  # the runs it shares with the CLI
    linked = [line.strip() for line in libraries.splitlines() if any(p in line.lower() for p in PRESENTATION)]
    assert linked == []
