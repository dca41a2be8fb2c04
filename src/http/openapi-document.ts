// Finishes the OpenAPI document that @fastify/swagger generated from the routes' schemas. What
// is true of every operation is written here once rather than in 96 route schemas:
// - every 4XX/5XX answer is application/problem+json with the one `Problem` schema (the error
//   handler answers nothing else; @fastify/swagger would say application/json);
// - a 2XX answer a route also streams (`produces` lists text/event-stream) is declared as
//   server-sent events next to its JSON page.
import { PROBLEM_TYPE } from './error-handler.ts';

type Json = Record<string, unknown>;
interface Schema extends Json {
  $ref?: string;
}
interface Media {
  schema?: Schema;
  [key: string]: unknown;
}
interface Answer {
  description?: string;
  content?: Record<string, Media>;
  [key: string]: unknown;
}
interface Operation {
  operationId?: string;
  requestBody?: { content?: Record<string, Media> };
  responses?: Record<string, Answer>;
  [key: string]: unknown;
}
interface Document {
  paths?: Record<string, Record<string, Operation>>;
  components?: { schemas?: Record<string, Schema> };
}

export const EVENT_STREAM = 'text/event-stream';

const PROBLEM_ANSWERS: Record<string, string> = {
  '4': 'Refused: a problem (RFC 9457) whose `code` says why and what to send instead.',
  '5': 'Failed on our side: a problem (RFC 9457); quote its `request_id` when reporting it.',
};

const problemAnswer = (status: string): Answer => ({
  description: PROBLEM_ANSWERS[status.charAt(0)],
  content: { [PROBLEM_TYPE]: { schema: { $ref: '#/components/schemas/Problem' } } },
});

const eventStream: Media = {
  schema: {
    type: 'string',
    description:
      'Server-sent events (sent when the request has `Accept: text/event-stream`): `id:`, ' +
      '`event:` and `data:` lines, `data` being one JSON value; comment lines keep it alive.',
  },
};

/** Every operation of the document, with its method and path. */
export function operationsOf(doc: Document): Array<[string, string, Operation]> {
  return Object.entries(doc.paths ?? {}).flatMap(([path, item]) =>
    Object.entries(item).map(([method, op]): [string, string, Operation] => [path, method, op]),
  );
}

function finishAnswers(op: Operation) {
  for (const [status, answer] of Object.entries(op.responses ?? {})) {
    if (/^[45]/.test(status)) {
      (op.responses as Record<string, Answer>)[status] = problemAnswer(status);
      continue;
    }
    if (answer.content?.[EVENT_STREAM]) answer.content[EVENT_STREAM] = eventStream;
  }
}

export function finishDocument<D extends object>(generated: D): D {
  const doc = generated as Document;
  for (const [, , op] of operationsOf(doc)) finishAnswers(op);
  return generated;
}
