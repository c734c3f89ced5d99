"""The dashboard hook-up: ``run`` serves the dashboard with its runner attached; ``serve`` gets a
runner that opens the setup page's camera and port when live refereeing starts.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from referee.app.dispenser import DispenserFeed
from referee.app.errors import LiveError
from referee.app.live import Feed, LiveReferee, RunOptions
from referee.app.pipeline import LazyVision
from referee.app.questions import CardQuestions
from referee.app.settings import Settings
from referee.app.sources import open_source

if TYPE_CHECKING:
    from referee.app.streams import PhoneFrames
    from vision.calibrate import SavedCalibration
    from web.live import FrameBuffer


def serve_dashboard(
    runner: LiveReferee,
    frames: FrameBuffer | None,
    games_dir: Path,
    port: int,
    err: TextIO,
    camera_source: str = "",
    serial_port: str = "",
    host: str = "127.0.0.1",
    trusted_hosts: Sequence[str] = (),
    phone: PhoneFrames | None = None,
) -> tuple[Any, Any, str]:
    """The dashboard on ``host`` (this machine only unless told otherwise) with this runner
    attached, served from a thread. Returns the app, the server and its address. The admin PIN
    is ``$GIZMOS_ADMIN_PIN`` or a random one, printed. Host names the pages may be reached by
    are checked as ``serve`` checks them (``web/serve.py``). With ``phone`` the phone's browser
    is the camera: the dashboard is served over HTTPS with a certificate made on this machine
    (``web/tls.py``), and the phone page's address, the certificate's fingerprint and a
    pairing code are printed."""
    from referee.app.card_art import DrawnCardArt
    from web import create_app
    from web.security import random_pin
    from web.serve import PIN_ENV, ServeError, exposure_warning, make_dashboard_server
    from web.serve import trusted_hosts as trusted_names

    pin = os.environ.get(PIN_ENV) or random_pin()
    if PIN_ENV not in os.environ:
        err.write(f"admin PIN for the dashboard: {pin} (set ${PIN_ENV} to choose one)\n")
    warning = exposure_warning(host)
    if warning:
        err.write(f"run: the dashboard is {warning}\n")
    config: dict[str, Any] = {
        "ADMIN_PIN": pin,
        "GAMES_DIR": str(games_dir),
        "FRAME_SOURCE": frames,
        "LIVE_RUNNER": runner,
        "CARD_QUESTIONS": getattr(runner, "questions", None),
        "SPREAD_ENROLMENT": getattr(getattr(runner, "questions", None), "spread", None),
        "CARD_ART": DrawnCardArt(),
        "CAMERA_SOURCE": camera_source,
        "SERIAL_PORT": serial_port,
        "TRUSTED_HOSTS": trusted_names(host, trusted_hosts),
    }
    context = None
    if phone is not None:
        from web.tls import CertificateError, ensure_certificate, local_names, server_context

        try:
            cert = ensure_certificate(games_dir / "tls", local_names(host, trusted_hosts))
        except CertificateError as exc:
            raise LiveError(str(exc)) from None
        context = server_context(cert)
        config.update(PHONE_CAMERA=phone, SESSION_COOKIE_SECURE=True)
    app = create_app(config)
    try:  # a busy port is an error, never another port
        server = make_dashboard_server(host, port, app, ssl_context=context)
    except ServeError as exc:
        raise LiveError(str(exc)) from None
    threading.Thread(target=server.serve_forever, name="dashboard", daemon=True).start()
    shown = f"[{host}]" if ":" in host else host
    url = f"{'https' if phone is not None else 'http'}://{shown}:{server.port}/"
    if phone is not None:
        from web.phone import pairing_of
        from web.serve import is_loopback

        code, ttl = pairing_of(app).new_code()
        reach = host
        if host in ("0.0.0.0", "::"):  # the phone needs an address it can reach, not the wildcard
            lan = [n for n in cert.names if n not in ("localhost", "127.0.0.1", "::1")]
            reach = next(iter(trusted_hosts), lan[0] if lan else host)
        phone_url = f"https://{f'[{reach}]' if ':' in reach else reach}:{server.port}/phone"
        err.write(
            f"run: the phone camera: open {phone_url} on the phone, accept the certificate warning "
            f"once (this referee made its own; SHA-256 {cert.fingerprint}), then pair with the code "
            f"{code} (good once, {ttl / 60:g} minutes; a new one at {phone_url}/pair) or the admin PIN\n"
        )
        if is_loopback(host):
            err.write(
                f"run: note: {host} is this machine only; for a phone on the network listen on it "
                "(--host 0.0.0.0 --trusted-host THIS-MACHINE'S-ADDRESS)\n"
            )
    return app, server, url


def serve_command(args: Any) -> int:
    """``gizmos-referee serve``: the dashboard with a camera pipeline for the setup page's Start.
    Its ``--zones`` and ``--calibration`` are read now, so a bad file is one line at start, not a
    surprise when live refereeing begins; ``--model`` is looked for at Start (most game nights
    may never use it)."""
    from referee.app.card_art import DrawnCardArt
    from vision.calibrate import load_calibration
    from vision.zones import load_zones
    from web.serve import run

    zones = load_zones(args.zones)
    saved = load_calibration(Path(args.calibration).expanduser(), zones) if args.calibration else None
    model = Path(args.model) if args.model else args.locations.detector  # the settings' default
    return run(
        args,
        card_art=DrawnCardArt(),
        live=lambda: serve_runner(args.enrol, model=model, zones=args.zones, calibration=saved),
    )


def serve_runner(
    enrol: str | None = None,
    fps: float = 10.0,
    model: Path | None = None,
    zones: str | None = None,
    calibration: SavedCalibration | None = None,
) -> tuple[LiveReferee, FrameBuffer]:
    """The live runner and frame source ``gizmos-referee serve`` attaches to the dashboard: the
    setup page's Start opens the camera source and the serial port of the settings (saved beside
    the game records) and referees the game from the camera, as ``run`` does, from ``calibration``
    when one was saved."""
    from web.live import FrameBuffer

    frames = FrameBuffer("camera (not started)")
    vision = LazyVision(model, zones=zones, enrol=enrol, calibration=calibration)

    def opener(settings: Any = None) -> Feed:
        camera = str(getattr(settings, "camera_source", "") or "").strip()
        if not camera:
            raise LiveError(
                "no camera source: set one on the setup page (0 for the first camera, a stream URL, "
                "a video file or a folder of images)"
            )
        port = str(getattr(settings, "serial_port", "") or "").strip()
        source = open_source(camera, fps)
        try:
            vision.build()  # a missing model is said now, not from the runner's thread
        except LiveError:
            source.close()
            raise
        frames.set_status(False, "starting", source=source.name)
        frames.follow_link(getattr(source, "link_status", None))
        try:
            dispenser = DispenserFeed(port) if port and port.lower() != "none" else None
        except LiveError:
            source.close()
            raise
        return Feed(source, dispenser)

    runner = LiveReferee(vision, opener, RunOptions(), frames)
    runner.ask(CardQuestions(enrol or Settings.from_env().enrol_dir))
    return runner, frames
