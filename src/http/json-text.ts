// An answer a service already holds as JSON text (a page of a member roster,
// teams/member-rosters.ts) is sent as is, with the type the route's serializer would give it;
// any other value goes through that serializer. Fastify sends a string with a JSON content type
// untouched.
import type { FastifyReply } from 'fastify';

export function jsonOrText<T extends object>(reply: FastifyReply, value: T | string): T | string {
  if (typeof value === 'string') reply.type('application/json; charset=utf-8');
  return value;
}
