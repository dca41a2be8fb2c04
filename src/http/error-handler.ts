// The one place where any error becomes an HTTP answer: application/problem+json (RFC 9457)
// with a stable `code`, field `errors` where they apply, and the request id. Stack traces and
// internal messages never leave the process; they go to the log.
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../errors.ts';
import { fieldErrorsOf, orList, type AjvIssue } from './validation-messages.ts';
import { fromPgError } from './pg-errors.ts';
import { lingerOnClose } from './lingering-close.ts';

export const PROBLEM_TYPE = 'application/problem+json';

/** The methods a 405's Allow header may list (HEAD comes with every GET route). */
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;

function fromFastifyError(err: FastifyError, request: FastifyRequest): AppError | undefined {
  if (err.validation) {
    const ctx = err.validationContext;
    if (ctx === 'params') return new AppError(404, 'not_found', 'Not found', 'No such resource.');
    if (ctx === 'body' && (request.body === undefined || request.body === null)) {
      return new AppError(
        400,
        'body_required',
        'Bad request',
        'This endpoint needs a JSON object body.',
      );
    }
    const mapped = fieldErrorsOf(err.validation as AjvIssue[]);
    const unknownOnly = err.validation.every(
      (i) => (i as AjvIssue).keyword === 'additionalProperties',
    );
    // A field whose schema names its own code (a role that may not be given here) lends it to
    // the whole answer when it is the only kind of error.
    const own = mapped.every((e) => e.code === mapped[0]?.code) ? mapped[0]?.code : undefined;
    const code = own ?? (unknownOnly ? 'unknown_field' : 'validation_failed');
    const errors = mapped.map(({ path, message }) => ({ path, message }));
    return new AppError(
      422,
      code,
      'Unprocessable content',
      errors.map((e) => `${e.path || ctx}: ${e.message}`).join('; '),
      errors,
    );
  }
  switch (err.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new AppError(
        400,
        'unsupported_content_type',
        'Bad request',
        'Send JSON with Content-Type: application/json.',
      );
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new AppError(
        413,
        'body_too_large',
        'Content too large',
        'The request body is larger than this service accepts.',
      );
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new AppError(
        400,
        'invalid_content_length',
        'Bad request',
        'Content-Length does not match the body.',
      );
  }
  if (err instanceof SyntaxError || err.code?.startsWith('FST_ERR_CTP')) {
    return new AppError(400, 'invalid_json', 'Bad request', 'The body is not valid JSON.');
  }
  if (err.statusCode && err.statusCode >= 400 && err.statusCode < 500) {
    return new AppError(
      err.statusCode,
      'bad_request',
      'Bad request',
      'The request could not be understood.',
    );
  }
  return undefined;
}

export function sendProblem(reply: FastifyReply, e: AppError) {
  const body = {
    type: `about:blank`,
    title: e.title,
    status: e.status,
    detail: e.message,
    code: e.code,
    request_id: reply.request.id,
    ...(e.errors ? { errors: e.errors } : {}),
  };
  return reply.code(e.status).headers(e.headers).type(PROBLEM_TYPE).send(body);
}

export function installErrorHandling(app: FastifyInstance) {
  app.setErrorHandler((err: FastifyError, request, reply) => {
    const known =
      err instanceof AppError ? err : (fromFastifyError(err, request) ?? fromPgError(err));
    if (known) {
      // Known 5xx (database down, agent offline, starting up): a line, not a stack trace.
      if (known.status >= 500)
        request.log.warn(
          { code: known.code, cause: err.message },
          'request failed: %s',
          known.code,
        );
      // Answered before its body was read: close only once the client has stopped sending.
      if (known.status === 413) lingerOnClose(request.raw.socket);
      return sendProblem(reply, known);
    }
    request.log.error({ err }, 'unhandled error');
    return sendProblem(
      reply,
      new AppError(
        500,
        'internal_error',
        'Internal server error',
        'Something went wrong on our side. Quote the request id when reporting it.',
      ),
    );
  });
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? request.url;
    // A path that exists with other methods is 405 with Allow (RFC 9110 15.5.6), not 404.
    const allowed = METHODS.filter((method) => app.findRoute({ method, url: path }) !== null);
    if (allowed.length > 0) {
      return sendProblem(
        reply,
        new AppError(
          405,
          'method_not_allowed',
          'Method not allowed',
          `${path} does not take ${request.method}: send ${orList(allowed)}.`,
          undefined,
          { allow: allowed.join(', ') },
        ),
      );
    }
    return sendProblem(
      reply,
      new AppError(404, 'route_not_found', 'Not found', `No route ${request.method} ${path}.`),
    );
  });
}
