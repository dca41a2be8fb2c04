// PostgreSQL errors that carry meaning for a client: constraint names map to domain errors,
// data exceptions to 422, lost connections and timeouts to 503. Anything else stays a 500.
import {
  type AppError,
  conflict,
  ownerImmutable,
  serviceUnavailable,
  unprocessable,
} from '../errors.ts';

interface PgError {
  code?: string;
  constraint?: string;
  hint?: string;
  message?: string;
  syscall?: string;
}

const UNIQUE_CONSTRAINTS: Record<string, () => AppError> = {
  teams_slug_key: () => conflict('slug_taken', 'That slug is already in use.'),
  grants_team_project_key: () =>
    conflict('grant_exists', 'This project is already shared with this team.'),
  team_members_pkey: () =>
    conflict('already_member', 'That person is already a member of this team.'),
  users_email_key: () => conflict('email_taken', 'An account with that e-mail already exists.'),
  invitations_one_open: () =>
    conflict('invitation_exists', 'An open invitation for that address exists; resend it instead.'),
  spaces_project_id_name_key: () =>
    conflict('space_name_taken', 'A space with that name exists in this project.'),
  domains_hostname_key: () =>
    conflict('domain_taken', 'That hostname is already attached to a frame.'),
  volumes_frame_name_key: () =>
    conflict('volume_name_taken', 'This frame already has a volume with that name.'),
  volumes_frame_mount_key: () =>
    conflict('mount_path_taken', 'This frame already has a volume mounted at that path.'),
};

const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  '57P01',
  '57P02',
  '57P03',
  '08000',
  '08003',
  '08006',
]);

/** Foreign keys that refuse a delete because something still depends on the row. */
const FOREIGN_KEY_CONSTRAINTS: Record<string, () => AppError> = {
  frames_space_id_fkey: () =>
    conflict('space_not_empty', 'This space still holds frames; delete them first.'),
  // An org that owns a project cannot be deleted (migrations/0015, ON DELETE RESTRICT).
  projects_org_id_fkey: () =>
    conflict('org_not_empty', 'This organization still owns projects; delete or move them first.'),
};

export function fromPgError(err: unknown): AppError | undefined {
  const e = err as PgError;
  if (!e || typeof e !== 'object') return undefined;
  const constraint = e.constraint;
  const foreignKey = constraint ? FOREIGN_KEY_CONSTRAINTS[constraint] : undefined;
  if (e.code === '23503' && foreignKey) return foreignKey();
  const unique = constraint ? UNIQUE_CONSTRAINTS[constraint] : undefined;
  if (e.code === '23505' && unique) return unique();
  if (e.code === 'P0001' && e.hint === 'owner_immutable')
    return ownerImmutable(e.message ?? 'The team owner is fixed.');
  // The org triggers of migrations/0015: the services check first, these hold for any writer.
  if (e.code === 'P0001' && e.hint === 'org_role')
    return unprocessable('role_not_allowed', 'An organization has no viewer role.');
  if (e.code === 'P0001' && e.hint === 'grant_to_org')
    return unprocessable('grant_to_org', 'A project is shared with a team, not an organization.');
  if (e.code?.startsWith('22'))
    return unprocessable('invalid_value', 'A value in the request is not acceptable.');
  // A server on a Unix socket (the embedded one) that is down has no socket file: connect() says ENOENT.
  if (e.code === 'ENOENT' && e.syscall === 'connect')
    return serviceUnavailable(
      'database_unavailable',
      'The database is not reachable; try again shortly.',
    );
  if (e.code && CONNECTION_CODES.has(e.code))
    return serviceUnavailable(
      'database_unavailable',
      'The database is not reachable; try again shortly.',
    );
  // statement_timeout: the database is overloaded or a lock is held too long.
  if (e.code === '57014')
    return serviceUnavailable(
      'database_timeout',
      'The database took too long to answer; try again shortly.',
    );
  if (
    e.message &&
    /Connection terminated|timeout exceeded when trying to connect|is not queryable|Query read timeout/i.test(
      e.message,
    )
  ) {
    return serviceUnavailable(
      'database_unavailable',
      'The database is not reachable; try again shortly.',
    );
  }
  return undefined;
}
