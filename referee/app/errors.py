"""The application layer's one error for what the user gave it: a camera, file, port or setting
that cannot be used. Frame sources, the dispenser feed, the pipeline and the commands all raise it;
the CLI turns it into one line and exit status 2."""


class LiveError(Exception):
    """A camera, file, port or setting that cannot be used; the message names it and says why."""
