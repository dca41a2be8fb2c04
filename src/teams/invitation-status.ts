// An invitation's status is derived from its timestamps and the service clock, never stored.
export type InvitationStatus = 'pending' | 'accepted' | 'expired' | 'revoked';

export interface InvitationTimes {
  accepted_at: Date | null;
  revoked_at: Date | null;
  declined_at: Date | null;
  expires_at: Date;
}

export function invitationStatus(i: InvitationTimes, now: Date): InvitationStatus {
  if (i.accepted_at) return 'accepted';
  if (i.revoked_at || i.declined_at) return 'revoked'; // a declined invitation is revoked by its invitee
  if (i.expires_at <= now) return 'expired';
  return 'pending';
}

export const INVITATION_DAYS = 7;
