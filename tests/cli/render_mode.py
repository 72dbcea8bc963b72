#!/usr/bin/env python3
"""Renders a mode shape of a `ziggurat modes --vtk` file offscreen with VTK, as ParaView would show
it: the mesh warped by the mode's point vector, coloured by its magnitude, written as a PNG.

Usage: render_mode.py MODES.vtu ARRAY OUT.png   (needs an X display: run it under xvfb-run)
"""
import sys

import vtk


def main(vtu, array, png):
    reader = vtk.vtkXMLUnstructuredGridReader()
    reader.SetFileName(vtu)
    reader.Update()
    reader.GetOutput().GetPointData().SetActiveVectors(array)
    warp = vtk.vtkWarpVector()
    warp.SetInputConnection(reader.GetOutputPort())
    warp.SetScaleFactor(0.1)
    surface = vtk.vtkDataSetSurfaceFilter()
    surface.SetInputConnection(warp.GetOutputPort())
    mapper = vtk.vtkDataSetMapper()
    mapper.SetInputConnection(surface.GetOutputPort())
    mapper.SetScalarModeToUsePointFieldData()
    mapper.SelectColorArray(array)
    mapper.ColorByArrayComponent(array, -1)  # the magnitude
    mapper.SetScalarRange(reader.GetOutput().GetPointData().GetArray(array).GetRange(-1))
    actor = vtk.vtkActor()
    actor.SetMapper(mapper)
    renderer = vtk.vtkRenderer()
    renderer.AddActor(actor)
    renderer.SetBackground(1, 1, 1)
    renderer.GetActiveCamera().Elevation(30)
    renderer.ResetCamera()
    window = vtk.vtkRenderWindow()
    window.SetOffScreenRendering(1)
    window.AddRenderer(renderer)
    window.SetSize(320, 240)
    window.Render()
    image = vtk.vtkWindowToImageFilter()
    image.SetInput(window)
    writer = vtk.vtkPNGWriter()
    writer.SetFileName(png)
    writer.SetInputConnection(image.GetOutputPort())
    writer.Write()


if __name__ == "__main__":
    main(*sys.argv[1:4])
