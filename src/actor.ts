// Who is calling: resolved once per request by http/auth.ts, then passed to every service call.
export interface Actor {
  userId: string;
  tokenId: string;
  requestId: string;
  ip: string;
}
