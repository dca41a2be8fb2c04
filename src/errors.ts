// Domain errors. Services throw these; the error handler (http/error-handler.ts) is the only
// place that turns anything into an HTTP answer. `code` is the stable name clients match on.
// They live outside http/ so that services and the db layer can throw them without depending
// on the HTTP server.

export interface FieldError {
  path: string;
  message: string;
}

export class AppError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly title: string,
    detail?: string,
    readonly errors?: FieldError[],
    readonly headers: Record<string, string> = {},
  ) {
    super(detail ?? title);
  }
}

export const unauthorized = (
  detail = 'A bearer token is required: send Authorization: Bearer ' +
    '<token>, with a token from sign-up, login or POST /v2/user/tokens.',
) =>
  new AppError(401, 'unauthorized', 'Unauthorized', detail, undefined, {
    'www-authenticate': 'Bearer',
  });

/** An Authorization header that is not `Bearer <token>` (RFC 6750 2.1): the token is never
 *  looked at, and the answer says how to send it. */
export const malformedAuthorization = () =>
  new AppError(
    401,
    'malformed_authorization',
    'Unauthorized',
    'The Authorization header must be "Bearer <token>": the word Bearer, one space, then the token ' +
      '(at most 512 characters, no spaces).',
    undefined,
    { 'www-authenticate': 'Bearer' },
  );

export const forbidden = (code: string, detail: string) =>
  new AppError(403, code, 'Forbidden', detail);

export const notFound = (what: string) =>
  new AppError(
    404,
    `${what.replace(/\s+/g, '_')}_not_found`,
    'Not found',
    `No such ${what}, or it is not visible to you.`,
  );

export const conflict = (code: string, detail: string) =>
  new AppError(409, code, 'Conflict', detail);

export const gone = (code: string, detail: string) => new AppError(410, code, 'Gone', detail);

export const unprocessable = (code: string, detail: string, errors?: FieldError[]) =>
  new AppError(422, code, 'Unprocessable content', detail, errors);

export const fieldError = (path: string, code: string, message: string) =>
  unprocessable(code, message, [{ path, message }]);

export const tooManyRequests = (retryAfterSeconds: number) =>
  new AppError(
    429,
    'rate_limited',
    'Too many requests',
    `Try again in ${retryAfterSeconds} seconds.`,
    undefined,
    {
      'retry-after': String(retryAfterSeconds),
    },
  );

export const serviceUnavailable = (code: string, detail: string, retryAfterSeconds = 5) =>
  new AppError(503, code, 'Service unavailable', detail, undefined, {
    'retry-after': String(retryAfterSeconds),
  });

/** Owner guardrails of the spec (section 3): 403 with one code everywhere. */
export const ownerImmutable = (detail: string) => forbidden('owner_immutable', detail);

export const roleTooLow = (needed: string) =>
  forbidden('insufficient_role', `This action needs the ${needed} role or higher.`);
