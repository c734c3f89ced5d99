"""The dashboard's own HTTPS certificate: browsers give the camera only to secure pages.

When the phone's browser is the camera the dashboard is served over HTTPS with a self-signed
certificate made here, on this machine (``cryptography``; nothing is downloaded). It is kept in
the games folder (``tls/cert.pem``, ``tls/key.pem``, the key readable by its owner only) and used
again on the next run, so the phone's browser warns once per certificate and remembers the
choice; a new one is made when the names it covers (this machine's name and addresses, the host
the dashboard listens on and every ``--trusted-host``) change or it nears its end. Its SHA-256
fingerprint is printed, so the warning page can be checked against it.
"""

from __future__ import annotations

import contextlib
import datetime
import ipaddress
import os
import socket
import ssl
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

VALID_DAYS = 825  # what browsers accept for a certificate
RENEW_DAYS = 30


class CertificateError(Exception):
    """The certificate cannot be made or read (a folder that cannot be written): one line."""


@dataclass(frozen=True, slots=True)
class Certificate:
    """Where the certificate and key lie, and the fingerprint a user checks the warning against."""

    cert: Path
    key: Path
    fingerprint: str  # SHA-256, colon-separated hex
    names: tuple[str, ...]


def local_names(host: str, extra: Iterable[str] = ()) -> list[str]:
    """The names a phone may reach this machine by: ``host`` (unless a wildcard), ``extra``,
    this machine's name and its addresses, and the loopback names."""
    names = [host] if host not in ("", "0.0.0.0", "::") else []
    names += list(extra)
    hostname = socket.gethostname()
    names += [hostname, "localhost", "127.0.0.1"]
    with contextlib.suppress(OSError):
        names += [str(info[4][0]) for info in socket.getaddrinfo(hostname, None, type=socket.SOCK_STREAM)]
    try:  # the address of the route out (no packet is sent by a UDP connect)
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            probe.connect(("192.0.2.1", 9))
            names.append(str(probe.getsockname()[0]))
    except OSError:
        pass
    seen: dict[str, None] = {}
    for name in names:
        name = name.strip().lower()
        if name and "%" not in name:
            seen.setdefault(name, None)
    return list(seen)


def _alt_name(name: str) -> x509.GeneralName:
    try:
        return x509.IPAddress(ipaddress.ip_address(name))
    except ValueError:
        return x509.DNSName(name)


def _fingerprint(cert: x509.Certificate) -> str:
    return ":".join(f"{b:02X}" for b in cert.fingerprint(hashes.SHA256()))


def _reusable(cert_path: Path, key_path: Path, names: list[str]) -> x509.Certificate | None:
    """The certificate already there if it covers ``names`` and is not near its end, else None."""
    if not (cert_path.is_file() and key_path.is_file()):
        return None
    try:
        cert = x509.load_pem_x509_certificate(cert_path.read_bytes())
        covered = {
            str(n.value).lower()
            for n in cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
        }
    except (ValueError, x509.ExtensionNotFound, OSError):
        return None
    ends = cert.not_valid_after_utc - datetime.timedelta(days=RENEW_DAYS)
    if not set(names) <= covered or ends < datetime.datetime.now(datetime.UTC):
        return None
    return cert


def ensure_certificate(folder: Path, names: list[str]) -> Certificate:
    """The certificate in ``folder`` for ``names``: the one there if it still serves, else a new one."""
    cert_path, key_path = folder / "cert.pem", folder / "key.pem"
    cert = _reusable(cert_path, key_path, names)
    if cert is None:
        key = ec.generate_private_key(ec.SECP256R1())
        subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"Gizmos Referee on {names[0]}")])
        now = datetime.datetime.now(datetime.UTC)
        cert = (
            x509.CertificateBuilder()
            .subject_name(subject)
            .issuer_name(subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=VALID_DAYS))
            .add_extension(x509.SubjectAlternativeName([_alt_name(n) for n in names]), critical=False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .sign(key, hashes.SHA256())
        )
        try:
            folder.mkdir(parents=True, exist_ok=True)
            fd = os.open(key_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "wb") as out:
                out.write(
                    key.private_bytes(
                        serialization.Encoding.PEM,
                        serialization.PrivateFormat.PKCS8,
                        serialization.NoEncryption(),
                    )
                )
            cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        except OSError as exc:
            raise CertificateError(
                f"cannot write the HTTPS certificate in {folder}: {exc.strerror or exc}"
            ) from None
    return Certificate(cert_path, key_path, _fingerprint(cert), tuple(names))


def server_context(cert: Certificate) -> ssl.SSLContext:
    """An ``ssl.SSLContext`` serving ``cert`` (TLS 1.2 or newer)."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.load_cert_chain(cert.cert, cert.key)
    return context
