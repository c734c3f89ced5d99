"""The application layer: the command line, the live run loop, the demo and the reports.

The only package that composes vision, hardware, web and the tracker. Importing a module here
may need OpenCV or Flask; importing :mod:`referee`, the engine or the tracker never does.
"""
