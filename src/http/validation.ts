// Two Ajv instances: bodies are validated strictly (no type coercion, so `"port": "8080"` is
// refused, and unknown fields are reported rather than silently dropped); params and query
// strings arrive as text and are coerced to the declared types. Both are `verbose`: each error
// carries the schema it broke, from which validation-messages.ts words what to send.
import AjvModule from 'ajv';
import formatsModule from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';
import { ERROR_CODE, ERROR_MESSAGE } from './schemas.ts';

// Both packages are CommonJS with a default export; ESM sees it under .default.
const Ajv = ((AjvModule as unknown as { default?: unknown }).default ??
  AjvModule) as typeof AjvModule.default;
const addFormats = ((formatsModule as unknown as { default?: unknown }).default ??
  formatsModule) as typeof formatsModule.default;

function make(coerce: boolean) {
  const ajv = new Ajv({
    allErrors: true,
    removeAdditional: false,
    useDefaults: true,
    coerceTypes: coerce,
    strict: false,
    verbose: true,
  });
  addFormats(ajv);
  // Annotations that word errors; they validate nothing.
  ajv.addKeyword({ keyword: ERROR_MESSAGE, schemaType: 'string' });
  ajv.addKeyword({ keyword: ERROR_CODE, schemaType: 'string' });
  return ajv;
}

const strict = make(false);
const lenient = make(true);

export const validatorCompiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) =>
  (httpPart === 'body' ? strict : lenient).compile(schema as object);
