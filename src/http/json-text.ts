// An answer a service already holds as JSON text (a page of a member roster,
// teams/member-rosters.ts) or as its UTF-8 bytes (a frame, frames/frame-rows.ts) is sent as
// is, with the type the route's serializer would give it; any other value goes through that
// serializer. Fastify sends a string with a JSON content type, and a Buffer, untouched.
import type { FastifyReply } from 'fastify';

export function jsonOrText<T extends object>(
  reply: FastifyReply,
  value: T | string | Buffer,
): T | string | Buffer {
  if (typeof value === 'string' || Buffer.isBuffer(value))
    reply.type('application/json; charset=utf-8');
  return value;
}
