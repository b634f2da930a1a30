"""Builds adi._core with the repository's CMake (the library and the module, target
adi_python_core) and packages it with the pure-Python files of python/adi.

Environment:
  ADI_CMAKE_ARGS   extra CMake arguments, e.g. "-DADI_WITH_CUDA=OFF" or
                   "-DCMAKE_CUDA_ARCHITECTURES=90" (default: CUDA when nvcc is found)
  ADI_BUILD_DIR    the CMake build folder (default: <repo>/build-python, kept between
                   installs so that a second install rebuilds only what changed)
  CMAKE_BUILD_PARALLEL_LEVEL   parallel compile jobs (default: the CPU count)
"""
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


class CMakeExtension(Extension):
    def __init__(self, name: str) -> None:
        super().__init__(name, sources=[])


class CMakeBuild(build_ext):
    def build_extension(self, ext: Extension) -> None:
        if not (ROOT / "CMakeLists.txt").exists() or not (ROOT / "adi" / "adi.hpp").exists():
            raise RuntimeError(f"adi: {ROOT} is not the adi repository; install from a clone: pip install ./python")
        build = Path(os.environ.get("ADI_BUILD_DIR", ROOT / "build-python"))
        cmake = shutil.which("cmake")
        if cmake is None:
            raise RuntimeError("adi: cmake not found (Debian: apt-get install cmake)")
        args = [cmake, "-S", str(ROOT), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release", "-DADI_WITH_PYTHON=ON",
                "-DADI_BUILD_TESTS=OFF", "-DADI_BUILD_EXAMPLES=OFF", "-DADI_BUILD_BENCHMARKS=OFF",
                "-DADI_WITH_MPI=OFF", "-DADI_WITH_VTK=OFF", f"-DPython3_EXECUTABLE={sys.executable}"]
        if shutil.which("ninja") and not (build / "CMakeCache.txt").exists():
            args += ["-G", "Ninja"]
        if shutil.which("ccache"):
            args += ["-DCMAKE_CXX_COMPILER_LAUNCHER=ccache", "-DCMAKE_CUDA_COMPILER_LAUNCHER=ccache"]
        args += shlex.split(os.environ.get("ADI_CMAKE_ARGS", ""))
        subprocess.check_call(args)
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL", str(os.cpu_count() or 2))
        subprocess.check_call([cmake, "--build", str(build), "--target", "adi_python_core", "-j", jobs])
        built = sorted((build / "python" / "adi").glob("_core*.so"))
        if not built:
            raise RuntimeError(f"adi: the build produced no _core module under {build / 'python' / 'adi'}")
        target = Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built[-1], target)


setup(ext_modules=[CMakeExtension("adi._core")], cmdclass={"build_ext": CMakeBuild})
