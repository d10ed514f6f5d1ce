"""spice_authority: the Python host client of the spice-authority helper (RFC 0007's run authority).

* :mod:`spice_authority.client`: :class:`AuthorityClient`, one method per HTTP API v1 operation;
* :mod:`spice_authority.errors`: typed errors, one per problem code (the Java ``HelperProblem`` names);
* :mod:`spice_authority.payload`: canonical v1alpha2 payloads (decode, validate, encode, build);
* :mod:`spice_authority.plan`: the plan identity (tool fingerprints, static plan IDs, fingerprint);
* :mod:`spice_authority.envelope`: reading the signed envelope a host stores;
* :mod:`spice_authority.importer`: the import order as one call (a context manager).

Standard library only; Python 3.11 or later.
"""

from .client import AuthorityClient, AuthorityView, ImportView, RetryPolicy, RunView, Session
from .errors import (Busy, Cancelled, Closing, HelperError, HelperProblem, HelperProtocolError, HelperTimeout,
                     HelperTransportError, HelperUnreachable, HelperUntrusted, InvalidRequest, InvalidSnapshot,
                     NotFound, StateConflict, Unauthorized, Unavailable, Uncertain, Unrecognized, UnsupportedFormat,
                     VerificationFailed)
from .payload import PayloadRejected, Snapshot, SnapshotBuilder
from .transport import TcpEndpoint, UnixEndpoint

__version__ = "0.1.0"

__all__ = [
    "AuthorityClient", "AuthorityView", "ImportView", "RetryPolicy", "RunView", "Session",
    "Busy", "Cancelled", "Closing", "HelperError", "HelperProblem", "HelperProtocolError", "HelperTimeout",
    "HelperTransportError", "HelperUnreachable", "HelperUntrusted", "InvalidRequest", "InvalidSnapshot",
    "NotFound", "StateConflict", "Unauthorized", "Unavailable", "Uncertain", "Unrecognized", "UnsupportedFormat", "VerificationFailed",
    "PayloadRejected", "Snapshot", "SnapshotBuilder", "TcpEndpoint", "UnixEndpoint",
]
