"""The tournament hub's web side: its store of every table's record, the board of tables and
standings, and the organiser's page. The MQTT side and the ``hub`` command that compose it are
in :mod:`referee.app.tournament` (this package imports no application module)."""
