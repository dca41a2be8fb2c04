// Two Ajv instances: bodies are validated strictly (no type coercion, so `"port": "8080"` is
// refused, and unknown fields are reported rather than silently dropped); params and query
// strings arrive as text and are coerced to the declared types.
import AjvModule from 'ajv';
import formatsModule from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';

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
  return ajv.compile(schema as object) as ReturnType<FastifySchemaCompiler<unknown>>;
};
