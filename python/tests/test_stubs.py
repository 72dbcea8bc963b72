"""The type stubs (ziggurat/__init__.pyi) checked against the module as it runs, by mypy.stubtest
(python3-mypy): every public name, argument and default the stubs give must be the module's."""

import os
import shutil
import subprocess
import sys

import pytest

import ziggurat

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE = os.path.dirname(os.path.abspath(ziggurat.__file__))
pytest.importorskip("mypy.stubtest", reason="mypy.stubtest checks the stubs: install python3-mypy")


def stubtest(package_parent, tmp_path):
    config = tmp_path / "mypy.ini"
    config.write_text("[mypy]\nignore_missing_imports = True\nfollow_imports = silent\n"
                      f"cache_dir = {tmp_path / 'cache'}\n")
    env = dict(os.environ, PYTHONPATH=str(package_parent))
    return subprocess.run([sys.executable, "-m", "mypy.stubtest", "ziggurat", "--concise", "--mypy-config-file",
                           str(config), "--allowlist", os.path.join(HERE, "stubtest_allowlist.txt")],
                          env=env, capture_output=True, text=True, timeout=600)


def test_stubs_match_the_module(tmp_path):
    result = stubtest(os.path.dirname(PACKAGE), tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_drifted_stub_is_found(tmp_path):
    # The package with modes() stubbed without projection=, the drift issue 40 found.
    copy = tmp_path / "package" / "ziggurat"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    libraries = os.path.join(os.path.dirname(PACKAGE), "ziggurat.libs")  # a wheel's install: the module's RPATH
    if os.path.isdir(libraries):
        shutil.copytree(libraries, copy.parent / "ziggurat.libs")
    stub = copy / "__init__.pyi"
    text = stub.read_text()
    line = '    projection: Literal["auto", "tiles", "columns", "tensor"] = "auto",\n'
    assert line in text
    stub.write_text(text.replace(line, ""))
    result = stubtest(copy.parent, tmp_path)
    assert result.returncode != 0 and 'ziggurat.modes is inconsistent, stub does not have argument "projection"' \
        in result.stdout
