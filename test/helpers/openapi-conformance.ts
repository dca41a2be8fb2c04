// Checks answers against the OpenAPI document (GET /v2/openapi.json): the status is declared for
// the operation, the content type is one the answer declares, and the body is valid against
// that media type's schema (JSON Schema 2020-12, as OpenAPI 3.1 has it, with Ajv). The
// fuzz, security and authorization tests pass their answers through it: `checkAnswers(t)` wraps
// the test app's request helpers, `conformance(doc).check(...)` serves those that inject.
import Ajv2020Module from 'ajv/dist/2020.js';
import formatsModule from 'ajv-formats';
import type { ValidateFunction } from 'ajv';
import type { TestApp } from './app.ts';

// CommonJS packages with a default export; ESM sees it under .default.
const Ajv2020 = ((Ajv2020Module as unknown as { default?: unknown }).default ??
  Ajv2020Module) as typeof Ajv2020Module.default;
const addFormats = ((formatsModule as unknown as { default?: unknown }).default ??
  formatsModule) as typeof formatsModule.default;

export interface Answer {
  method: string;
  url: string;
  status: number;
  contentType: string;
  body: string;
}

interface Operation {
  path: string;
  method: string;
  pattern: RegExp;
  params: number;
  responses: Record<string, { content?: Record<string, { schema?: unknown }> }>;
}

const DOC_ID = 'openapi';

export function conformance(doc: any) {
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
  addFormats(ajv);
  ajv.addSchema({ $id: DOC_ID, components: doc.components }, DOC_ID);
  const ops: Operation[] = Object.entries<Record<string, any>>(doc.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, op]) => ({
      path,
      method: method.toUpperCase(),
      // A path parameter is one segment.
      pattern: new RegExp(`^${path.replace(/\{[^}]+\}/g, '[^/]+')}$`),
      params: path.split('{').length - 1,
      responses: op.responses,
    })),
  );
  const validators = new Map<string, ValidateFunction>();
  const validatorOf = (key: string, schema: unknown) => {
    let v = validators.get(key);
    if (!v) {
      // The answer's schema refers to the components relative to the document.
      const text = JSON.stringify(schema).replaceAll('"#/components/', `"${DOC_ID}#/components/`);
      v = ajv.compile(JSON.parse(text));
      validators.set(key, v);
    }
    return v;
  };
  const seen = new Set<string>();

  /** Where `a` breaks the document (none when it conforms, or names no operation of it). */
  function check(a: Answer): string[] {
    const path = a.url.split('?')[0] ?? a.url;
    // As the router does, a literal segment wins over a parameter.
    const op = ops
      .filter((o) => o.method === a.method && o.pattern.test(path))
      .sort((x, y) => x.params - y.params)[0];
    if (!op) return []; // no operation: a route the document hides, or a 404/405 of the router
    const label = `${a.method} ${op.path} → ${a.status}`;
    const status = String(a.status);
    const key = [status, `${status[0]}XX`, 'default'].find((k) => op.responses[k]);
    if (!key) return [`${label}: status not declared`];
    seen.add(`${a.method} ${op.path} ${key}`);
    const content = op.responses[key]?.content;
    if (!content) return a.body === '' ? [] : [`${label}: a body where none is declared`];
    const media = a.contentType.split(';')[0]?.trim().toLowerCase() ?? '';
    const declared = content[media];
    if (!declared) return [`${label}: content-type ${media}, declared ${Object.keys(content)}`];
    let value: unknown = a.body;
    if (media.endsWith('json')) {
      try {
        value = JSON.parse(a.body);
      } catch {
        return [`${label}: the body is not JSON`];
      }
    }
    const why = validate(declared.schema ?? {}, value);
    if (why.length === 0) return [];
    return [`${label}: ${media} body breaks its schema: ${why.slice(0, 3).join('; ')}`];
  }

  /** Why `value` is not valid against `schema` (a schema of the document, $refs and all). */
  function validate(schema: unknown, value: unknown): string[] {
    const v = validatorOf(JSON.stringify(schema), schema);
    return v(value) ? [] : (v.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message}`);
  }

  return {
    check,
    validate,
    /** `METHOD path status-key` of every declared answer seen so far. */
    seen,
  };
}

/**
 * Passes every answer of `t`'s request helpers (request, get, post, …) through the document,
 * from now on; `violations` lists what broke it.
 */
export async function checkAnswers(t: TestApp) {
  await t.app.ready();
  const c = conformance(t.app.swagger());
  const violations: string[] = [];
  let checked = 0;
  const send = t.request;
  const request: TestApp['request'] = async (method, path, o) => {
    const r = await send(method, path, o);
    checked++;
    violations.push(
      ...c.check({
        method: method.toUpperCase(),
        url: path,
        status: r.status,
        contentType: String(r.headers['content-type'] ?? ''),
        body: r.text,
      }),
    );
    return r;
  };
  Object.assign(t, {
    request,
    get: (p: string, o?: Parameters<typeof request>[2]) => request('GET', p, o),
    post: (p: string, o?: Parameters<typeof request>[2]) => request('POST', p, o),
    patch: (p: string, o?: Parameters<typeof request>[2]) => request('PATCH', p, o),
    put: (p: string, o?: Parameters<typeof request>[2]) => request('PUT', p, o),
    del: (p: string, o?: Parameters<typeof request>[2]) => request('DELETE', p, o),
  });
  return {
    violations,
    seen: c.seen,
    get checked() {
      return checked;
    },
  };
}
