// The one place where any error becomes an HTTP answer: application/problem+json (RFC 9457)
// with a stable `code`, field `errors` where they apply, and the request id. Stack traces and
// internal messages never leave the process; they go to the log.
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, type FieldError } from './errors.ts';
import { fromPgError } from './pg-errors.ts';
import { lingerOnClose } from './lingering-close.ts';

export const PROBLEM_TYPE = 'application/problem+json';

interface AjvIssue { instancePath: string; keyword: string; params: Record<string, unknown>; message?: string; propertyName?: string }

const pathOf = (pointer: string) => pointer.replace(/^\//, '').replace(/\//g, '.');
const join = (a: string, b: string) => (a ? `${a}.${b}` : b);

/** Field hints: a field that exists under another name in this request. */
const RENAMED_FIELDS: Record<string, string> = { git_repository: 'git_repository_name' };

function fieldErrors(issues: AjvIssue[]): FieldError[] {
  const out: FieldError[] = [];
  for (const i of issues) {
    const at = pathOf(i.instancePath);
    if (i.keyword === 'additionalProperties') {
      const name = String(i.params.additionalProperty);
      const hint = RENAMED_FIELDS[name] ? `; did you mean "${RENAMED_FIELDS[name]}"?` : '';
      out.push({ path: join(at, name), message: `unknown field "${name}"${hint}` });
    } else if (i.keyword === 'required') {
      out.push({ path: join(at, String(i.params.missingProperty)), message: 'is required' });
    } else if (i.propertyName !== undefined) {
      out.push({ path: join(at, i.propertyName), message: `name ${i.message ?? 'is invalid'}` });
    } else {
      out.push({ path: at, message: i.message ?? 'is invalid' });
    }
  }
  // Ajv may report one problem through several keywords (anyOf); keep each message once.
  return out.filter((e, n) => out.findIndex((x) => x.path === e.path && x.message === e.message) === n);
}

function fromFastifyError(err: FastifyError, request: FastifyRequest): AppError | undefined {
  if (err.validation) {
    const ctx = err.validationContext;
    if (ctx === 'params') return new AppError(404, 'not_found', 'Not found', 'No such resource.');
    if (ctx === 'body' && (request.body === undefined || request.body === null)) {
      return new AppError(400, 'body_required', 'Bad request', 'This endpoint needs a JSON object body.');
    }
    const errors = fieldErrors(err.validation as AjvIssue[]);
    const unknownOnly = err.validation.every((i) => (i as AjvIssue).keyword === 'additionalProperties');
    return new AppError(422, unknownOnly ? 'unknown_field' : 'validation_failed', 'Unprocessable content',
      errors.map((e) => `${e.path || ctx}: ${e.message}`).join('; '), errors);
  }
  switch (err.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new AppError(400, 'unsupported_content_type', 'Bad request', 'Send JSON with Content-Type: application/json.');
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new AppError(413, 'body_too_large', 'Content too large', 'The request body is larger than this service accepts.');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new AppError(400, 'invalid_content_length', 'Bad request', 'Content-Length does not match the body.');
  }
  if (err instanceof SyntaxError || err.code?.startsWith('FST_ERR_CTP')) {
    return new AppError(400, 'invalid_json', 'Bad request', 'The body is not valid JSON.');
  }
  if (err.statusCode && err.statusCode >= 400 && err.statusCode < 500) {
    return new AppError(err.statusCode, 'bad_request', 'Bad request', 'The request could not be understood.');
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
    const known = err instanceof AppError ? err : fromFastifyError(err, request) ?? fromPgError(err);
    if (known) {
      // Known 5xx (database down, agent offline, starting up): a line, not a stack trace.
      if (known.status >= 500) request.log.warn({ code: known.code, cause: err.message }, 'request failed: %s', known.code);
      // Answered before its body was read: close only once the client has stopped sending.
      if (known.status === 413) lingerOnClose(request.raw.socket);
      return sendProblem(reply, known);
    }
    request.log.error({ err }, 'unhandled error');
    return sendProblem(reply, new AppError(500, 'internal_error', 'Internal server error',
      'Something went wrong on our side. Quote the request id when reporting it.'));
  });
  app.setNotFoundHandler((request, reply) =>
    sendProblem(reply, new AppError(404, 'route_not_found', 'Not found', `No route ${request.method} ${request.url.split('?')[0]}.`)));
}
