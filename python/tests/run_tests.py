"""CTest's python_tests and python_gpu_tests: pytest on python/tests against the module built
in the build tree (ADI_PYTHON_PATH).

    run_tests.py            every suite but test_gpu.py
    run_tests.py --gpu      test_gpu.py; exits 77 (CTest's skip) when no GPU test ran (no
                            CUDA build, no device, neither CuPy nor PyTorch), listing why

Exits 77 with the reason when NumPy or pytest is missing; otherwise pytest's verdict, with
the skip reasons listed (-rs)."""
import os
import sys

missing = []
for module in ("numpy", "pytest"):
    try:
        __import__(module)
    except ImportError:
        missing.append(module)
if missing:
    print(f"python_tests: SKIPPED: {', '.join(missing)} not importable by {sys.executable} "
          f"(Debian: apt-get install {' '.join('python3-' + m for m in missing)})")
    sys.exit(77)

import pytest  # noqa: E402

here = os.path.dirname(os.path.abspath(__file__))
args = ["-rs", "-q", "-p", "no:cacheprovider"]


class CountGpu:
    """Counts the tests marked gpu that passed."""

    def __init__(self):
        self.passed = 0

    def pytest_runtest_logreport(self, report):
        if report.when == "call" and report.passed and "gpu" in report.keywords:
            self.passed += 1


if "--gpu" in sys.argv:
    counter = CountGpu()
    rc = pytest.main([os.path.join(here, "test_gpu.py")] + args, plugins=[counter])
    if rc == 0 and counter.passed == 0:
        print("python_gpu_tests: SKIPPED: no GPU test ran (reasons above)")
        sys.exit(77)
    sys.exit(rc)
sys.exit(pytest.main([here, "--ignore", os.path.join(here, "test_gpu.py")] + args))
