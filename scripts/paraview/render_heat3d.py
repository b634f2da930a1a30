"""Draws docs/heat3d.png with ParaView itself from heat3d's output (pvpython).

    xvfb-run -a pvpython scripts/paraview/render_heat3d.py build/heat3d_out/heat3d.pvd -o docs/heat3d.png

Opens the .pvd as File > Open does, takes its last time step, and renders the solution u
on the three mid-planes (Slice filters) with the box outline and a colour bar, beside the
pointwise error on the same planes. Debian's ParaView renders through X: run it under
xvfb-run (package xvfb) on a machine without a display. scripts/install_deps.sh
--with-paraview installs both; see check_outputs.py for why /opt/python3-paraview.
"""
import argparse
import os
import sys

_site = os.environ.get("ADI_PARAVIEW_SITE", "/opt/python3-paraview/usr/lib/python3/dist-packages")
if os.path.isdir(_site):
    sys.path.insert(0, _site)

from paraview.simple import (  # noqa: E402
    ColorBy, CreateView, GetColorTransferFunction, GetScalarBar, OpenDataFile, Outline, Render, SaveScreenshot,
    Show, Slice, Text, AssignViewToLayout, CreateLayout)


def planes(source, view, array, title):
    bounds = source.GetDataInformation().GetBounds()
    centre = [(bounds[2 * a] + bounds[2 * a + 1]) / 2 for a in range(3)]
    for normal in ([1, 0, 0], [0, 1, 0], [0, 0, 1]):
        s = Slice(Input=source)
        s.SliceType = "Plane"
        s.SliceType.Origin = centre
        s.SliceType.Normal = normal
        d = Show(s, view)
        ColorBy(d, ("POINTS", array))
    Show(Outline(Input=source), view)
    lut = GetColorTransferFunction(array)
    lut.RescaleTransferFunction(*source.PointData[array].GetRange())
    bar = GetScalarBar(lut, view)
    bar.Title = title
    bar.ComponentTitle = ""
    bar.Visibility = 1
    view.CameraPosition = [2.6, -1.9, 2.0]
    view.CameraFocalPoint = centre
    view.CameraViewUp = [0, 0, 1]
    view.OrientationAxesVisibility = 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("pvd", help="heat3d's .pvd (or one .vti)")
    ap.add_argument("-o", "--output", default="heat3d.png")
    ap.add_argument("--size", default="1400x600", help="WxH pixels")
    a = ap.parse_args()
    reader = OpenDataFile(a.pvd)
    if reader is None:
        sys.exit(f"render_heat3d.py: ParaView cannot open {a.pvd}")
    times = list(getattr(reader, "TimestepValues", None) or [0.0])
    reader.UpdatePipeline(times[-1])
    w, h = (int(x) for x in a.size.split("x"))
    layout = CreateLayout("heat3d")
    views = []
    for array, title in (("u", "u"), ("error", "error")):
        v = CreateView("RenderView")
        v.ViewTime = times[-1]
        AssignViewToLayout(view=v, layout=layout, hint=0)
        planes(reader, v, array, title)
        views.append(v)
    t = Text(Text=f"heat3d, t = {times[-1]:.4g}: u and its pointwise error on the mid-planes (ParaView)")
    Show(t, views[0])
    layout.SetSize(w, h)
    Render(views[0])
    SaveScreenshot(a.output, layout, ImageResolution=[w, h])
    print(f"render_heat3d.py: wrote {a.output}")


if __name__ == "__main__":
    main()
