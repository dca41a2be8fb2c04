// A refusal or failure of the service as one typed exception. Every error body of the API is a
// problem (RFC 9457, application/problem+json) with a stable `code`; an answer that is not one
// (a proxy's HTML page, a dropped connection) still becomes a FrameplaneError, with a code that
// says so, so that callers handle one type.
import type { components } from './schema.d.ts';

export type Problem = components['schemas']['Problem'];
export type FieldError = NonNullable<Problem['errors']>[number];

export class FrameplaneError extends Error {
  override readonly name = 'FrameplaneError';
  /** HTTP status; 0 when no answer came (network failure). */
  readonly status: number;
  /** Stable snake_case name of the error (`not_found`, `validation_failed`, …). */
  readonly code: string;
  readonly detail: string;
  /** Field-level messages of a validation error, if any. */
  readonly errors: FieldError[];
  readonly requestId: string | undefined;

  constructor(
    status: number,
    code: string,
    detail: string,
    errors: FieldError[] = [],
    id?: string,
    /** What failed underneath, for status 0: fetch's error, whose own cause says why. */
    cause?: unknown,
  ) {
    super(`${detail} (${status} ${code})`, cause === undefined ? undefined : { cause });
    this.status = status;
    this.code = code;
    this.detail = detail;
    this.errors = errors;
    this.requestId = id;
  }

  /** Builds the error from a non-2xx answer and the body openapi-fetch parsed (JSON or text). */
  static from(response: Response, body: unknown): FrameplaneError {
    if (isProblem(body))
      return new FrameplaneError(
        body.status ?? response.status,
        body.code,
        body.detail ?? body.title ?? '',
        body.errors ?? [],
        body.request_id,
      );
    const text = typeof body === 'string' ? body.slice(0, 200) : '';
    return new FrameplaneError(
      response.status,
      'unexpected_answer',
      `${response.status} ${response.statusText}${text ? `: ${text}` : ''}`,
      [],
      response.headers.get('x-request-id') ?? undefined,
    );
  }
}

function isProblem(body: unknown): body is Partial<Problem> & { code: string } {
  return typeof body === 'object' && body !== null && typeof (body as Problem).code === 'string';
}
