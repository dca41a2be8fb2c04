// Row types of every table, for Kysely. Mirrors migrations/*.sql.
import type { ColumnType, Generated } from 'kysely';

export type Role = 'viewer' | 'member' | 'admin' | 'owner';
type Timestamp = ColumnType<Date, Date | string, Date | string>;
type Json = ColumnType<unknown, string | null, string | null>;

export interface DB {
  service_clock: { id: Generated<boolean>; offset_ms: ColumnType<string, never, unknown> };
  users: {
    id: string; email: string; name: string; password_hash: string;
    billing_status: Generated<'active' | 'past_due'>; created_at: Timestamp;
  };
  access_tokens: {
    id: string; user_id: string; name: string; kind: 'session' | 'personal'; token_hash: Buffer;
    created_at: Timestamp; expires_at: Timestamp | null; last_used_at: Timestamp | null; revoked_at: Timestamp | null;
  };
  projects: { id: string; owner_id: string; name: string; created_at: Timestamp };
  spaces: { id: string; project_id: string; name: string; created_at: Timestamp };
  teams: { id: string; name: string; slug: string; owner_id: string; created_at: Timestamp };
  team_members: { team_id: string; user_id: string; role: Role; joined_at: Timestamp };
  invitations: {
    id: string; team_id: string; email: string; role: Role; token_hash: Buffer; invited_by: string | null;
    created_at: Timestamp; expires_at: Timestamp; accepted_at: Timestamp | null; accepted_by: string | null;
    revoked_at: Timestamp | null; declined_at: Timestamp | null; closed_at: Timestamp | null;
  };
  grants: { id: string; team_id: string; project_id: string; role: Role; created_by: string | null; created_at: Timestamp };
  audit_events: {
    id: string; team_id: string | null; project_id: string | null; actor_id: string | null; action: string;
    target_type: string; target_id: string; before: Json; after: Json; request_id: string | null; at: Timestamp;
  };
  emails: {
    id: string; to_address: string; subject: string; sealed_text: string; sealed_html: string;
    status: Generated<'pending' | 'sent' | 'logged'>; attempts: Generated<number>; last_error: string | null;
    created_at: Timestamp; delivered_at: Timestamp | null;
  };
  rate_limits: { key: string; window_start: Timestamp; count: number };
}
