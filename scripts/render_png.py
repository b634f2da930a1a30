#!/usr/bin/python3
"""Draws docs/heat3d.png from heat3d's own VTK output.

Reads one frame (by default the last) of a .pvd series, or a single .vti, with
VTK's XML reader and plots the three orthogonal mid-planes of the solution (top
row) and of the pointwise error (bottom row) with matplotlib; no display needed.

    scripts/render_png.py build/heat3d_out/heat3d.pvd -o docs/heat3d.png

Needs python3-vtk9 and python3-matplotlib (scripts/install_deps.sh --with-picture).
The shebang is Debian's python3, where those packages live.
"""
import argparse
import os
import sys
import xml.etree.ElementTree as ET

try:
    import matplotlib

    matplotlib.use("Agg")  # offscreen
    import matplotlib.pyplot as plt
    import numpy as np
    from vtkmodules.util.numpy_support import vtk_to_numpy
    from vtkmodules.vtkIOXML import vtkXMLImageDataReader
except ImportError as e:
    sys.exit(f"render_png.py: {e}; install python3-vtk9 python3-matplotlib "
             "(scripts/install_deps.sh --with-picture) and run with /usr/bin/python3")


def pick_frame(path, frame):
    """(vti path, time) of frame `frame` of a .pvd, or the .vti itself."""
    if not path.endswith(".pvd"):
        return path, None
    sets = ET.parse(path).getroot().findall("./Collection/DataSet")
    if not sets:
        sys.exit(f"render_png.py: {path} lists no frames")
    try:
        ds = sets[frame]
    except IndexError:
        sys.exit(f"render_png.py: frame {frame} out of range ({len(sets)} frames in {path})")
    return os.path.join(os.path.dirname(path), ds.get("file")), float(ds.get("timestep"))


def read_vti(path):
    r = vtkXMLImageDataReader()
    r.SetFileName(path)
    r.Update()
    img = r.GetOutput()
    if img.GetNumberOfPoints() == 0:
        sys.exit(f"render_png.py: cannot read {path}")
    nx, ny, nz = img.GetDimensions()
    pd = img.GetPointData()
    # VTK point ids run x fastest: as a C array that is [z][y][x].
    arrays = {pd.GetArrayName(i): vtk_to_numpy(pd.GetArray(i)).reshape(nz, ny, nx)
              for i in range(pd.GetNumberOfArrays())}
    fd = img.GetFieldData().GetArray("TimeValue")
    t = fd.GetValue(0) if fd is not None else None
    axes = [img.GetOrigin()[d] + img.GetSpacing()[d] * np.arange(n)
            for d, n in enumerate((nx, ny, nz))]
    return arrays, axes, t


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("input", help="heat3d.pvd (a series) or one .vti")
    ap.add_argument("-o", "--output", default="docs/heat3d.png")
    ap.add_argument("--frame", type=int, default=-1, help="frame of the series (default: the last)")
    ap.add_argument("--dpi", type=int, default=90)
    a = ap.parse_args()

    vti, t_pvd = pick_frame(a.input, a.frame)
    arrays, (x, y, z), t = read_vti(vti)
    t = t if t is not None else t_pvd
    for name in ("u", "error"):
        if name not in arrays:
            sys.exit(f"render_png.py: {vti} has no array '{name}' (has {sorted(arrays)})")
    u, err = arrays["u"], arrays["error"]
    nz, ny, nx = u.shape
    i, j, k = nx // 2, ny // 2, nz // 2

    # Each slice as (2D array indexed [row=vertical][col=horizontal], extent, labels).
    def slices(f):
        return [
            (f[k, :, :], (x[0], x[-1], y[0], y[-1]), "x", "y", f"z = {z[k]:.3g}"),
            (f[:, j, :], (x[0], x[-1], z[0], z[-1]), "x", "z", f"y = {y[j]:.3g}"),
            (f[:, :, i], (y[0], y[-1], z[0], z[-1]), "y", "z", f"x = {x[i]:.3g}"),
        ]

    fig, axs = plt.subplots(2, 3, figsize=(13, 8), constrained_layout=True)
    for row, (f, label, cmap, sym) in enumerate(((u, "u", "viridis", False),
                                                 (err, "error u - exact", "RdBu_r", True))):
        lim = float(np.abs(f).max()) or 1.0
        vmin, vmax = (-lim, lim) if sym else (float(f.min()), float(f.max()))
        for col, (s, ext, hx, vy, where) in enumerate(slices(f)):
            ax = axs[row, col]
            im = ax.imshow(s, origin="lower", extent=ext, cmap=cmap, vmin=vmin, vmax=vmax,
                           interpolation="nearest", aspect="equal")
            ax.set_xlabel(hx)
            ax.set_ylabel(vy)
            ax.set_title(f"{label} on the plane {where}", fontsize=10)
        fig.colorbar(im, ax=axs[row, :], shrink=0.85, label=label,
                     format="%.1e" if sym else None)
    when = f"t = {t:.4g}" if t is not None else os.path.basename(vti)
    fig.suptitle(f"heat3d: u_t = kx u_xx + ky u_yy + kz u_zz on {nx} x {ny} x {nz} nodes, {when}\n"
                 "exact u = exp(-(kx+ky+kz) pi^2 t) sin(pi x + 0.3) sin(pi y + 0.5) sin(pi z + 0.7); "
                 f"max |error| = {np.abs(err).max():.2e}", fontsize=11)
    os.makedirs(os.path.dirname(os.path.abspath(a.output)), exist_ok=True)
    fig.savefig(a.output, dpi=a.dpi)
    print(f"render_png.py: wrote {a.output} ({os.path.getsize(a.output) // 1024} KiB) from {vti}")


if __name__ == "__main__":
    main()
