"""The Python package porta, built by porta's own CMake build: `pip install --no-build-isolation .`

Offline, with Debian's packages alone (python3-dev, pybind11-dev, python3-numpy, python3-setuptools,
python3-wheel, cmake, ninja-build and what porta itself needs: scripts/setup). PORTA_BACKEND picks the
backends as -DBACKEND does (default: cpu), and PORTA_CPU_KERNELS the x86-64 kernel sets as
-DPORTA_CPU_KERNELS does (default: every set). See docs/python.md.
"""
import os
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent


class CMakeBuild(build_ext):
    """Builds porta._porta with CMake (the target porta_python) and puts it where setuptools packs it."""

    def build_extension(self, ext):
        build = Path(self.build_temp).resolve() / "cmake"
        launcher = ["-DCMAKE_CXX_COMPILER_LAUNCHER=ccache"] if shutil.which("ccache") else []
        kernels = os.environ.get("PORTA_CPU_KERNELS")
        kernel_sets = [] if kernels is None else ["-DPORTA_CPU_KERNELS=" + kernels]
        os.environ.setdefault("CCACHE_BASEDIR", str(ROOT))  # as scripts/build: hits across checkouts
        subprocess.run(["cmake", "-S", str(ROOT), "-B", str(build), "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release",
                        "-DBACKEND=" + os.environ.get("PORTA_BACKEND", "cpu"), "-DPORTA_PYTHON=ON",
                        "-DPORTA_BUILD_TESTS=OFF", "-DPORTA_BUILD_BENCH=OFF", "-DPORTA_BUILD_TOOLS=OFF",
                        "-DPython3_EXECUTABLE=" + sys.executable, *kernel_sets, *launcher], check=True)
        subprocess.run(["cmake", "--build", str(build), "--target", "porta_python", "-j", str(os.cpu_count() or 1)],
                       check=True)
        built = next((build / "python" / "porta").glob("_porta*.so"))
        target = Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built, target)


setup(
    name="porta",
    version="0.1.0",
    description="Portable compute: one op graph, every device",
    packages=["porta"],
    package_dir={"": "python"},
    package_data={"porta": ["__init__.pyi", "py.typed"]},
    ext_modules=[Extension("porta._porta", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    options={"build": {"build_base": "build/pip"}},  # beside, not inside, scripts/build's folders
    python_requires=">=3.9",
    install_requires=["numpy"],
    zip_safe=False,
)
