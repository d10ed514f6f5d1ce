// @spice-authority/client: the host client for the spice-authority helper. See README.md.
export {
  HelperTransportError, HelperUnreachable, HelperUntrusted, HelperInterrupted, HelperTimeout, HelperProtocolError,
  HelperConnectionLost, HelperProblem, InvalidRequest, InvalidSnapshot, VerificationFailed, UnsupportedFormat, Busy, StateConflict,
  Uncertain, Unavailable, Cancelled, Closing, NotFound, Unauthorized, Unrecognized, ImportRefused, ImportUncertain,
  outcomeUnknown,
} from './src/errors.js';
export { AuthorityClient, Session, RetryPolicy, backoffMs } from './src/client.js';
export {
  unixEndpoint, tcpEndpoint, defaultEndpoint, defaultEndpointDirectory, checkUnixEndpoint, readTokenFile,
  endpointProofMac, verifyEndpointProof, MAX_HEAD_BYTES, MAX_BODY_BYTES, EXCHANGE_READ_TIMEOUTS,
} from './src/transport.js';
export {
  FORMAT, MEDIA_TYPE, MAX_PAYLOAD_BYTES, PAYLOAD_RULES, PayloadRejected, RawJson, SnapshotBuilder, canonicalize,
  decodeSnapshot, validatePayload, isValidRunId, RUN_ID_RULE,
} from './src/payload.js';
export {
  PLAN_DOMAIN, ToolDefinition, toolFingerprint, staticToolPlanId, planFingerprint, planIdentity, planMatches,
} from './src/plan.js';
export { parseEnvelope, EnvelopeRejected, macInput, lengthPrefixed, MAX_ENVELOPE_BYTES } from './src/envelope.js';
export { importRun, planCheck } from './src/import.js';
