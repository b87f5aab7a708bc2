/** Zulip's error codes used by this server, with the HTTP status each one carries by default. */
export const ErrorCodes = {
  BAD_REQUEST: 400,
  REQUEST_VARIABLE_MISSING: 400,
  REQUEST_VARIABLE_INVALID: 400,
  REQUEST_CONFUSING_VAR: 400,
  INVALID_JSON: 400,
  BAD_NARROW: 400,
  BAD_EVENT_QUEUE_ID: 400,
  STREAM_DOES_NOT_EXIST: 400,
  STREAM_WILDCARD_MENTION_NOT_ALLOWED: 400,
  TOPIC_WILDCARD_MENTION_NOT_ALLOWED: 400,
  CANNOT_DEACTIVATE_LAST_USER: 400,
  INVITATION_FAILED: 400,
  UNAUTHORIZED_PRINCIPAL: 400,
  UNAUTHORIZED: 401,
  INVALID_API_KEY: 401,
  AUTHENTICATION_FAILED: 401,
  USER_DEACTIVATED: 401,
  REALM_DEACTIVATED: 401,
  PASSWORD_AUTH_DISABLED: 401,
  PASSWORD_RESET_REQUIRED: 401,
  NONEXISTENT_SUBDOMAIN: 404,
  RATE_LIMIT_HIT: 429,
  REACTION_ALREADY_EXISTS: 400,
  REACTION_DOES_NOT_EXIST: 400,
  MOVE_MESSAGES_TIME_LIMIT_EXCEEDED: 400,
  INVALID_PUSH_DEVICE_TOKEN: 400,
  /** No push notification service is configured (Zulip 11's code for it). */
  PUSH_SERVICE_NOT_CONFIGURED: 400,
  REALM_UPLOAD_QUOTA: 400,
  EXPECTATION_MISMATCH: 400,
  SYSTEM_GROUP_REQUIRED: 400,
  CANNOT_DEACTIVATE_GROUP_IN_USE: 400,
  CANNOT_ADMINISTER_CHANNEL: 400,
  REQUEST_TIMEOUT: 400,
  /** An integration URL's payload that its integration cannot read. */
  ANOMALOUS_WEBHOOK_PAYLOAD: 400,
  /** An integration's event it does not handle: answered 200, `result` "success", so the sender does not retry. */
  UNSUPPORTED_WEBHOOK_EVENT_TYPE: 200,
  /** An integration whose event type comes in an HTTP header (GitHub's `X-GitHub-Event`), called without it. */
  MISSING_HTTP_EVENT_HEADER: 400,
  /** An upload that is not an image of an accepted format (custom emoji). */
  BAD_IMAGE: 400,
  /** Internal to Zulip's middleware; clients see UNAUTHORIZED. Kept for completeness. */
  UNAUTHENTICATED_USER: 401,
  /** Ours: an owning service or a dependency is unreachable. */
  SERVICE_UNAVAILABLE: 503,
  /** Ours: the request body is larger than the configured limit. */
  REQUEST_TOO_LARGE: 413,
  /** Ours: only for bugs; never reachable by bad input. */
  INTERNAL_SERVER_ERROR: 500,
} as const;

export type ErrorCode = keyof typeof ErrorCodes;
