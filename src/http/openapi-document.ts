// Finishes the OpenAPI document that @fastify/swagger generated from the routes' schemas. What
// is true of every operation is written here once rather than in 96 route schemas:
// - every 4XX/5XX answer is application/problem+json with the one `Problem` schema (the error
//   handler answers nothing else; @fastify/swagger would say application/json);
// - a 2XX answer a route also streams (`produces` lists text/event-stream) is declared as
//   server-sent events next to its JSON page;
// - every request body and 2XX body is a named component schema: a schema's `title` is its
//   name (CreateTeamBody), else the operation's (PostTeamsBody, GetTeamsResponse); a titled
//   schema inside one is named too, and each list answer includes the shared `ListEnvelope`;
// - an answer without a description is described by its status and schema;
// - the main records show an example (openapi-examples.ts).
import { PROBLEM_TYPE } from './error-handler.ts';
import { EXAMPLES } from './openapi-examples.ts';

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
  requestBody?: { description?: string; content?: Record<string, Media> };
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

const COMPONENTS = '#/components/schemas/';

const LIST_ENVELOPE: Schema = {
  type: 'object',
  description: 'A page of a list: pass `next_cursor` as `cursor` to get the next page.',
  required: ['data', 'next_cursor'],
  properties: {
    data: { type: 'array', items: {} },
    next_cursor: { type: ['string', 'null'], description: 'null on the last page' },
  },
};

const STATUS_WORDS: Record<string, string> = { 200: 'OK', 201: 'Created', 202: 'Accepted' };

const pascal = (id: string) => id.charAt(0).toUpperCase() + id.slice(1);

/** Names schemas as components of `doc`: one name is one schema, or the document is wrong. */
function namer(doc: Document) {
  doc.components ??= {};
  doc.components.schemas ??= {};
  const schemas = doc.components.schemas;
  schemas.ListEnvelope = LIST_ENVELOPE;

  const isObject = (v: unknown): v is Schema =>
    typeof v === 'object' && v !== null && !Array.isArray(v);

  // A list answer (data + next_cursor) as the envelope and its item.
  const asList = (s: Schema): Schema => {
    const props = s.properties as Record<string, Schema> | undefined;
    if (s.type !== 'object' || !props?.next_cursor || props.data?.type !== 'array') return s;
    if (s.additionalProperties === false) return s;
    const { next_cursor: _cursor, ...rest } = props;
    const required = (s.required as string[] | undefined)?.filter((r) => r !== 'next_cursor');
    const { title, description, ...page } = s;
    return {
      ...(title ? { title } : {}),
      ...(description ? { description } : {}),
      allOf: [{ $ref: `${COMPONENTS}ListEnvelope` }, { ...page, properties: rest, required }],
    };
  };

  // Names titled schemas nested in `s`, from the leaves up.
  const nameInside = (s: unknown): unknown => {
    if (Array.isArray(s)) return s.map(nameInside);
    if (!isObject(s)) return s;
    const out = Object.fromEntries(Object.entries(s).map(([k, v]) => [k, nameInside(v)]));
    return typeof out.title === 'string' ? refTo(out.title, out) : out;
  };

  const refTo = (name: string, s: Schema): Schema => {
    const schema = asList(s);
    const known = schemas[name];
    if (known && JSON.stringify(known) !== JSON.stringify(schema))
      throw new Error(`OpenAPI: two different schemas are named ${name}`);
    schemas[name] = schema;
    return { $ref: `${COMPONENTS}${name}` };
  };

  /** The media's schema as a component, named after its title or `fallback`; its name. */
  return (media: Media | undefined, fallback: string): string | undefined => {
    const s = media?.schema;
    if (!media || !s) return undefined;
    if (s.$ref) return s.$ref.slice(COMPONENTS.length);
    const inner = Object.fromEntries(Object.entries(s).map(([k, v]) => [k, nameInside(v)]));
    const name = typeof s.title === 'string' ? s.title : fallback;
    media.schema = refTo(name, { ...inner, title: name });
    return name;
  };
}

function finishAnswers(op: Operation, name: ReturnType<typeof namer>, bodyLimitBytes: number) {
  const id = pascal(op.operationId ?? 'operation');
  const bodies = Object.keys(op.responses ?? {}).filter((s) => /^2/.test(s) && s !== '204');
  const body = op.requestBody?.content?.['application/json'];
  name(body, `${id}Body`);
  if (op.requestBody)
    op.requestBody.description ??=
      `JSON of at most ${bodyLimitBytes} bytes (BODY_LIMIT_BYTES; ` +
      '413 body_too_large past it).';
  for (const [status, answer] of Object.entries(op.responses ?? {})) {
    if (/^[45]/.test(status)) {
      (op.responses as Record<string, Answer>)[status] = problemAnswer(status);
      continue;
    }
    const suffix = bodies.length > 1 ? status : '';
    const named = name(answer.content?.['application/json'], `${id}Response${suffix}`);
    if (answer.content?.[EVENT_STREAM]) answer.content[EVENT_STREAM] = eventStream;
    if (answer.description === 'Default Response' || !answer.description)
      answer.description =
        status === '204' ? 'Done: no content.' : `${STATUS_WORDS[status] ?? status}: ${named}.`;
  }
}

export function finishDocument<D extends object>(generated: D, bodyLimitBytes: number): D {
  const doc = generated as Document;
  const name = namer(doc);
  for (const [, , op] of operationsOf(doc)) finishAnswers(op, name, bodyLimitBytes);
  for (const [component, example] of Object.entries(EXAMPLES)) {
    const schema = doc.components?.schemas?.[component];
    if (!schema) throw new Error(`OpenAPI: an example of ${component}, which is no component`);
    schema.examples = [example];
  }
  return generated;
}
