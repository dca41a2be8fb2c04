// An answer object served many times (a page the member-pages memo holds) is serialized once:
// its JSON text is kept beside it, in a WeakMap that lets it go with the object, and sent as is.
// The text is the route's own serializer's (its response schema for 200), so the answer is the
// one Fastify would have written, content type included. One cache per route: the same object
// is never sent through another route's schema.
import type { FastifyReply } from 'fastify';

export function serializedOnce() {
  const texts = new WeakMap<object, string>();
  return (reply: FastifyReply, value: object): string => {
    let text = texts.get(value);
    if (text === undefined) {
      // A schema serializer answers a string (Fastify types any serializer's Buffer too).
      text = String(reply.serialize(value));
      texts.set(value, text);
    }
    reply.type('application/json; charset=utf-8');
    return text;
  };
}
