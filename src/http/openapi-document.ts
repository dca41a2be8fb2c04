// Finishes the OpenAPI document that @fastify/swagger generated from the routes' schemas.

export function finishDocument<D extends object>(doc: D): D {
  return doc;
}
