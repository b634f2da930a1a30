"""Opens example outputs with ParaView's own readers and checks their arrays (pvpython).

    pvpython scripts/paraview/check_outputs.py FILE=ARRAY[,ARRAY...][@POINTS] ...

For every FILE (.pvd, .pvti, .vti, .vtr, .vtp) it asks ParaView for a reader
(OpenDataFile, as File > Open does), updates every time step, and checks that each named
point array is there, has one tuple per point, and holds only finite values; @POINTS also
checks the number of points of each time step. Prints one line per file; exits 1 on the
first problem (naming the file, step and array), 0 when all pass.

Debian 12: python3-paraview and libvtk9-dev cannot both be installed, so
scripts/install_deps.sh --with-paraview unpacks python3-paraview into /opt/python3-paraview;
this script puts that folder first on sys.path when it exists (or $ADI_PARAVIEW_SITE).
"""
import os
import sys

_site = os.environ.get("ADI_PARAVIEW_SITE", "/opt/python3-paraview/usr/lib/python3/dist-packages")
if os.path.isdir(_site):
    sys.path.insert(0, _site)

import numpy as np  # noqa: E402
from paraview import servermanager  # noqa: E402
from paraview.simple import OpenDataFile  # noqa: E402
from vtkmodules.util.numpy_support import vtk_to_numpy  # noqa: E402


def leaves(data):
    """The datasets of a (possibly multiblock) dataset."""
    if data.IsA("vtkMultiBlockDataSet"):
        for i in range(data.GetNumberOfBlocks()):
            block = data.GetBlock(i)
            if block is not None:
                yield from leaves(block)
    else:
        yield data


def check(spec):
    path, _, rest = spec.partition("=")
    arrays, _, points = rest.partition("@")
    names = [a for a in arrays.split(",") if a]
    if not os.path.exists(path):
        sys.exit(f"check_outputs.py: {path}: no such file (did the example write it?)")
    reader = OpenDataFile(path)
    if reader is None:
        sys.exit(f"check_outputs.py: {path}: ParaView has no reader for it")
    times = list(getattr(reader, "TimestepValues", None) or [None])
    ranges = {n: [np.inf, -np.inf] for n in names}
    npoints = 0
    for t in times:
        reader.UpdatePipeline(t) if t is not None else reader.UpdatePipeline()
        data = servermanager.Fetch(reader)
        npoints = 0
        for ds in leaves(data):
            n = ds.GetNumberOfPoints()
            npoints += n
            pd = ds.GetPointData()
            for name in names:
                arr = pd.GetArray(name)
                where = f"{path} (time {t})"
                if arr is None:
                    have = [pd.GetArrayName(i) for i in range(pd.GetNumberOfArrays())]
                    sys.exit(f"check_outputs.py: {where}: no point array '{name}' (has {have})")
                if arr.GetNumberOfTuples() != n:
                    sys.exit(f"check_outputs.py: {where}: '{name}' has {arr.GetNumberOfTuples()} tuples "
                             f"for {n} points")
                v = vtk_to_numpy(arr)
                if not np.all(np.isfinite(v)):
                    sys.exit(f"check_outputs.py: {where}: '{name}' has {int(np.sum(~np.isfinite(v)))} "
                             f"NaN/Inf values")
                if v.size:
                    ranges[name][0] = min(ranges[name][0], float(v.min()))
                    ranges[name][1] = max(ranges[name][1], float(v.max()))
        if npoints == 0:
            sys.exit(f"check_outputs.py: {path} (time {t}): no points")
        if points and npoints != int(points):
            sys.exit(f"check_outputs.py: {path} (time {t}): {npoints} points, expected {points}")
    text = ", ".join(f"{n} [{lo:.4g}, {hi:.4g}]" for n, (lo, hi) in ranges.items())
    print(f"{os.path.basename(path)}: {reader.GetXMLName()}, {len(times)} time step(s), {npoints} points; {text}")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    for spec in sys.argv[1:]:
        check(spec)
    print(f"check_outputs.py: {len(sys.argv) - 1} file(s) read by ParaView, all arrays finite")
