"""ziggurat's PEP 517 build backend: builds the package `ziggurat` with the project's CMake and
packs it into a wheel that carries libziggurat (pyproject.toml names it; scikit-build-core is not
packaged for Debian 12, and nothing here needs more than the standard library and CMake).

The build runs in build/wheel under the source tree (kept between builds, so a second build
compiles only what changed; ccache is used where installed): the library, its application layer
and the module, nothing else. The wheel holds ziggurat/ (the package and its module, whose RPATH is
$ORIGIN/../ziggurat.libs) and, in ziggurat.libs, libziggurat.so.X.Y and libziggurat_app.so.X.Y; the
OpenCL loader, CLBlast and METIS they link are the system's (Debian's packages).
"""

import base64
import hashlib
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LIBS = "ziggurat.libs"


def _version():
    match = re.search(r"project\(ziggurat VERSION (\d+\.\d+\.\d+)", (ROOT / "CMakeLists.txt").read_text())
    if not match:
        raise RuntimeError("no project(ziggurat VERSION x.y.z) in CMakeLists.txt")
    return match.group(1)


def _tag():
    version = f"{sys.version_info.major}{sys.version_info.minor}"
    platform = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    return f"cp{version}-cp{version}-{platform}"


def _metadata(version):
    summary = re.search(r'DESCRIPTION "([^"]*)"', (ROOT / "CMakeLists.txt").read_text()).group(1)
    return (f"Metadata-Version: 2.1\nName: ziggurat\nVersion: {version}\nSummary: {summary}\n"
            "Requires-Python: >=3.9\nRequires-Dist: numpy\nRequires-Dist: scipy\n")


def _build(version):
    """Configures and builds the module in build/wheel; returns the build folder."""
    build = ROOT / "build" / "wheel"
    configure = ["cmake", "-S", str(ROOT), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release",
                 "-DZIGGURAT_PYTHON=ON", "-DZIGGURAT_BUILD_BENCH=OFF", "-DZIGGURAT_BUILD_TESTS=OFF",
                 "-DZIGGURAT_MPI=OFF", f"-DPython3_EXECUTABLE={sys.executable}",
                 # The module as installed: it finds the library beside the package, in the build too.
                 "-DZIGGURAT_PYTHON_INSTALL_DIR=.", f"-DCMAKE_INSTALL_LIBDIR={LIBS}",
                 "-DCMAKE_BUILD_WITH_INSTALL_RPATH=ON"]
    if shutil.which("ccache"):
        configure.append("-DCMAKE_CXX_COMPILER_LAUNCHER=ccache")
    subprocess.run(configure, check=True, stdout=sys.stderr)
    jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL") or str(os.cpu_count() or 1)
    subprocess.run(["cmake", "--build", str(build), "--target", "ziggurat_python", "-j", jobs], check=True,
                   stdout=sys.stderr)
    return build


def _files(build, version):
    """(name in the wheel, file on disk) of the package and the library."""
    major, minor, _ = version.split(".")
    package = build / "python" / "ziggurat"
    files = [(f"ziggurat/{p.relative_to(package).as_posix()}", p) for p in sorted(package.rglob("*"))
             if p.is_file() and "__pycache__" not in p.parts]
    for name in ("ziggurat", "ziggurat_app"):  # the module links the library and its application layer
        soname = f"lib{name}.so.{major}.{minor}"
        library = (build / "lib" / soname).resolve()  # the file the SONAME's link names
        files.append((f"{LIBS}/{soname}", library))
    return files


def _record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    version = _version()
    build = _build(version)
    dist_info = f"ziggurat-{version}.dist-info"
    name = f"ziggurat-{version}-{_tag()}.whl"
    record = []
    with zipfile.ZipFile(Path(wheel_directory) / name, "w", zipfile.ZIP_DEFLATED) as wheel:
        def add(arcname, data, mode=0o644):
            info = zipfile.ZipInfo(arcname, date_time=(2026, 1, 1, 0, 0, 0))
            info.external_attr = (0o100000 | mode) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            wheel.writestr(info, data)
            record.append(_record_line(arcname, data))

        for arcname, path in _files(build, version):
            add(arcname, path.read_bytes(), 0o755 if path.suffix == ".so" or ".so." in path.name else 0o644)
        add(f"{dist_info}/METADATA", _metadata(version).encode())
        add(f"{dist_info}/WHEEL", f"Wheel-Version: 1.0\nGenerator: ziggurat_backend\nRoot-Is-Purelib: false\n"
                                  f"Tag: {_tag()}\n".encode())
        record.append(f"{dist_info}/RECORD,,")
        wheel.writestr(f"{dist_info}/RECORD", "\n".join(record) + "\n")
    return name


def get_requires_for_build_wheel(config_settings=None):
    return []  # CMake, a compiler and pybind11 come from the system (scripts/setup.sh)


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    dist_info = Path(metadata_directory) / f"ziggurat-{_version()}.dist-info"
    dist_info.mkdir(parents=True, exist_ok=True)
    (dist_info / "METADATA").write_text(_metadata(_version()))
    return dist_info.name
