"""The energy dispenser's sensor board: wire protocol, serial driver, calibration, simulator.

See docs/hardware.md. The driver turns the board's lines into
:class:`referee.events.DispenserEvent` objects for the tracker.
"""
