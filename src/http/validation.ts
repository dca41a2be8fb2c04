// Two Ajv instances: bodies are validated strictly (no type coercion, so `"port": "8080"` is
// refused, and unknown fields are reported rather than silently dropped); params and query
// strings arrive as text and are coerced to the declared types.
import AjvModule from 'ajv';
import formatsModule from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';
import { PATTERN_MESSAGES } from './schemas.ts';

// Both packages are CommonJS with a default export; ESM sees it under .default.
const Ajv = ((AjvModule as unknown as { default?: unknown }).default ?? AjvModule) as typeof AjvModule.default;
const addFormats = ((formatsModule as unknown as { default?: unknown }).default ?? formatsModule) as typeof formatsModule.default;

function make(coerce: boolean) {
  const ajv = new Ajv({ allErrors: true, removeAdditional: false, useDefaults: true, coerceTypes: coerce, strict: false });
  addFormats(ajv);
  return ajv;
}

const strict = make(false);
const lenient = make(true);

export const validatorCompiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) => {
  const ajv = httpPart === 'body' ? strict : lenient;
  const validate = ajv.compile(schema as object);
  // Fastify reads `.errors` of the function it called: a pattern with a message of its own
  // (PATTERN_MESSAGES) is reported with that message instead of the regex.
  const friendly = Object.assign((data: unknown) => {
    const ok = validate(data);
    friendly.errors = validate.errors?.map((e) => {
      const message = e.keyword === 'pattern' ? PATTERN_MESSAGES.get(String(e.params.pattern)) : undefined;
      return message ? { ...e, message } : e;
    });
    return ok;
  }, { errors: undefined as typeof validate.errors });
  return friendly as unknown as ReturnType<FastifySchemaCompiler<unknown>>;
};
